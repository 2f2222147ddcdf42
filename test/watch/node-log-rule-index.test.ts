import { describe, expect, it } from "vitest";
import { eventTopic } from "../../src/chain/signatures.js";
import { TRANSFER_TOPIC } from "../../src/chain/token-transfer.js";
import { createRuleIndex } from "../../src/rules/rule-index.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { addressTopic } from "../../src/watch/index-by.js";
import { configFromText } from "../helpers/harness.js";
import { eventLog, nftTransfer } from "../rules/fixtures.js";

/**
 * A node log source serves every node-read watch at once, so without more each record would
 * meet the rules of every watch (10,000 watches: 10,000 tests a record). Each watch's rules
 * are filed under what its share requires (its contract, or the account a transfer is from
 * or to): a record meets the rules of its own watches only.
 */
const address = (kind: number, i: number) => `0x${kind.toString(16).padStart(2, "0")}${i.toString(16).padStart(38, "0")}`;
const TOKEN = address(0x70, 1);
const COLLECTION = address(0x71, 1);
const N = 200;

function config() {
  const watches: string[] = [];
  const rules: string[] = [];
  for (let i = 0; i < N; i++) {
    watches.push(`  - { name: c${i}, contract: "${address(0xc0, i)}", events: ["Approval(address indexed owner, address indexed spender, uint256 value)"] }`);
    rules.push(`  - { name: c${i}, watch: c${i}, notify: [out] }`);
    watches.push(`  - { name: w${i}, account: "${address(0xa0, i)}", tokens: ["${TOKEN}"], sources: [nft_transfers] }`);
    rules.push(`  - { name: w${i}-tokens, watch: w${i}, source: event_logs, notify: [out] }`, `  - { name: w${i}-nfts, watch: w${i}, source: nft_transfers, notify: [out] }`);
  }
  watches.push(`  - { name: collection, collection: "${COLLECTION}" }`);
  rules.push(`  - { name: collection, watch: collection, notify: [out] }`);
  return configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
store: { path: unused.db }
defaults: { source: node }
watches:
${watches.join("\n")}
rules:
${rules.join("\n")}
sinks: { out: { type: console } }
`);
}

describe("a node log source's rule index", () => {
  const plan = planFromConfig(config());
  const source = (operation: string) => plan.sources.find((s) => s.definition.operation === operation)!;
  const logs = source("nodeEventLogs");
  const nfts = source("nodeNftTransfers");
  const logIndex = createRuleIndex(logs.rules);
  const nftIndex = createRuleIndex(nfts.rules);
  const names = (rules: ReadonlyArray<{ name: string }>) => rules.map((r) => r.name);

  it("gives a contract's log the rules of that contract's watch alone", () => {
    expect(logs.rules).toHaveLength(2 * N);
    const approval = eventLog({ contract_address: address(0xc0, 7), type: "Approval", topics: [eventTopic("Approval(address,address,uint256)"), addressTopic(address(0x01, 1)), addressTopic(address(0x02, 2))] });
    expect(names(logIndex.candidates(approval))).toEqual(["c7"]);
  });

  it("gives a token's Transfer the rules of the wallets it is from or to, and a transfer between two watched wallets both", () => {
    const out = eventLog({ contract_address: TOKEN, topics: [TRANSFER_TOPIC, addressTopic(address(0xa0, 3)), addressTopic(address(0x09, 9))] });
    expect(names(logIndex.candidates(out))).toEqual(["w3-tokens"]);
    const between = eventLog({ contract_address: TOKEN, topics: [TRANSFER_TOPIC, addressTopic(address(0xa0, 3)), addressTopic(address(0xa0, 150))] });
    expect(names(logIndex.candidates(between))).toEqual(["w3-tokens", "w150-tokens"]);
  });

  it("gives an NFT transfer the rules of its collection and of the accounts it is from or to", () => {
    expect(nfts.rules).toHaveLength(N + 1);
    const transfer = nftTransfer({ contract: { contract_address: COLLECTION, contract_type: "KIP17" }, from: address(0xa0, 5), to: address(0x09, 9) });
    expect(names(nftIndex.candidates(transfer))).toEqual(["w5-nfts", "collection"]);
  });
});
