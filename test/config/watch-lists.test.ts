import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { summarize } from "../../src/cli/commands/validate.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { sourceKey } from "../../src/watch/source.js";
import { ADDRESS_A, ADDRESS_B, configErrorOf, issueAt } from "./helpers.js";

/**
 * `contracts:` and `accounts:` put many addresses under one watch and its rules, read from
 * the node only: the explorer answers one address a request, the node one list a query.
 */
const address = (i: number) => `0x${"c0"}${i.toString(16).padStart(38, "0")}`;
const TOKEN = "0x3333333333333333333333333333333333333333";

describe("a watch of a list of contracts or accounts", () => {
  it("is read from the node whatever defaults.source says, in one log query a window for every listed address", () => {
    const contracts = Array.from({ length: 1000 }, (_, i) => `"${address(i)}"`).join(", ");
    const { config } = parseConfigText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
defaults: { source: explorer }
watches:
  - { name: pools, contracts: [${contracts}], events: ["Swap(address,uint256)"] }
  - { name: deposits, accounts: ["${ADDRESS_A.toUpperCase().replace("0X", "0x")}", "${ADDRESS_B}"], tokens: ["${TOKEN}"] }
rules:
  - { name: swaps, watch: pools, notify: [out] }
  - { name: moves, watch: deposits, when: { direction: in }, notify: [out] }
sinks: { out: { type: console } }
`);
    expect(config.watches.map((w) => [w.kind, w.source])).toEqual([
      ["contracts", "node"],
      ["accounts", "node"],
    ]);
    // Addresses are kept lowercase, as every address the node returns.
    expect(config.watches[1]).toMatchObject({ accounts: [ADDRESS_A, ADDRESS_B], tokens: [TOKEN] });
    const plan = planFromConfig(config);
    expect(plan.sources.map((s) => s.definition.operation)).toEqual(["nodeEventLogs"]);
    const [logs] = plan.sources;
    // The contracts in one filter; the token's Transfers from (topic1) or to (topic2) either account in two.
    expect(logs?.logFilters?.map((f) => [f.address?.length, f.topics?.map((t) => (Array.isArray(t) ? t.length : t))])).toEqual([
      [1000, [1]],
      [1, [1, 2]],
      [1, [1, null, 2]],
    ]);
    // validate shows a long list by its first addresses, and the watch's share of the node's query, no source of its own.
    const shown = summarize("c.yaml", config);
    expect(shown).toContain(`pools     1,000 contracts: ${address(0)}, ${address(1)}, ${address(2)}, and 997 more`);
    expect(shown).toContain(`deposits  2 accounts: ${ADDRESS_A}, ${ADDRESS_B}`);
    expect(shown).not.toMatch(/^ {6}source event_logs/m);
    expect(logs?.members?.map((m) => [m.watch, m.filter])).toEqual([
      ["pools", expect.stringMatching(/^emitted by one of its 1000 contracts, topic0 in 0x[0-9a-f]{64}$/)],
      ["deposits", `Transfer logs of token ${TOKEN}`],
    ]);
  });

  it("keeps its position under its name: an address added to the list is read from where the watch is", () => {
    const text = (accounts: string[]) => `
watches:
  - { name: deposits, accounts: [${accounts.map((a) => `"${a}"`).join(", ")}], tokens: ["${TOKEN}"] }
rules:
  - { name: moves, watch: deposits, notify: [out] }
sinks: { out: { type: console } }
`;
    const keyOf = (accounts: string[]) => planFromConfig(parseConfigText(text(accounts)).config).sources[0]?.members?.[0]?.ownKey;
    expect(keyOf([ADDRESS_A])).toBe(keyOf([ADDRESS_A, ADDRESS_B]));
    // A single account watch of the same token keeps the key it always had.
    expect(keyOf([ADDRESS_A])).not.toBe(sourceKey({ network: "mainnet", operation: "nodeEventLogs", address: TOKEN, signature: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", account: ADDRESS_A }));
  });

  it("refuses another source, a family the node does not read, and keys of other kinds, at the key and its line", () => {
    const text = `
watches:
  - name: pools
    contracts: ["${ADDRESS_A}"]
    source: explorer
  - name: calls
    accounts: ["${ADDRESS_A}"]
    sources: [nft_transfers, internal_transactions]
  - name: mixed
    accounts: ["${ADDRESS_B}"]
    events: ["Transfer(address,address,uint256)"]
  - name: twice
    contracts: ["${ADDRESS_A}", "${ADDRESS_A}"]
  - name: both
    contract: "${ADDRESS_A}"
    contracts: ["${ADDRESS_B}"]
`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "test.yaml" }));
    const at = issueAt(text, error);
    at("source: explorer", "watches[0].source", "a contracts watch is read from the node only");
    at("sources: [nft", "watches[1].sources", "an accounts watch reads nft_transfers (and tokens) from the node; internal_transactions need an account watch per account");
    at("events:", "watches[2].events", "applies to contract and contracts watches only (this is an accounts watch)");
    expect(error.format()).toContain(`watches[3].contracts[1]: "${ADDRESS_A}" is listed twice`);
    at("contracts: [\"0x2", "watches[4].contracts", "a watch has exactly one of account, accounts, collection, contract, contracts, every_block or balance; this one has contract and contracts");
  });
});
