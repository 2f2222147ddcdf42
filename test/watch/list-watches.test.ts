import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeTokenTransfer } from "../../src/chain/token-transfer.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { EventLog, NftTransfer } from "../../src/explorer/types.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, quietCommon, readJsonLines, recordKeyOf, tempDir } from "../helpers/harness.js";

/**
 * An accounts or contracts watch on the simulator's chain, read from the node, against one
 * watch per address read from the explorer: the same records, each once, and `direction`
 * and the alert's account relative to the list.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-list-watches-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 5, initialBlocks: 150 });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

const TRANSFER = "Transfer(address indexed from, address indexed to, uint256 value)";

function configFor(name: string, start: number, watches: string, rules: string) {
  return configFromText(`
explorer: { base_url: "${sim.url}", requests_per_second: 100000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, requests_per_second: 100000 }
store: { path: "${join(dir.path, `${name}.db`)}" }
status: { listen: false }
defaults: { schedule: "*/10 * * * * *", start: ${start}, jitter: 0s }
watches:
${watches}
rules:
${rules}
sinks:
  out: { type: file, path: "${join(dir.path, `${name}.jsonl`)}" }
`);
}

async function once(name: string, config: ReturnType<typeof configFor>) {
  const daemon = await createDaemon(quietCommon(), { config });
  try {
    const { results } = (await daemon.runOnce({ drainTimeoutMs: 20_000 })).scan;
    expect(results.filter((r) => r.error !== undefined)).toEqual([]);
    return { operations: daemon.plan.sources.map((s) => s.definition.operation), alerts: readJsonLines<AlertDocument>(join(dir.path, `${name}.jsonl`)) };
  } finally {
    await daemon.stop();
  }
}

const keysBy = (alerts: readonly AlertDocument[], rule: (name: string) => boolean) => new Set(alerts.filter((a) => rule(a.rule)).map(recordKeyOf));
const partiesOf = (alert: AlertDocument) => {
  if (alert.source === "nft_transfers") {
    const d = alert.record as NftTransfer;
    return { from: d.from.toLowerCase(), to: d.to?.toLowerCase() };
  }
  return decodeTokenTransfer(alert.record as EventLog) as { from: string; to: string };
};

describe("a list watch read from the node", () => {
  it("sees exactly the records of one explorer-read watch per listed address, each once", async () => {
    const a = sim.addresses;
    const wallets = [a.busyWallet, ...a.wallets.filter((w) => w !== a.busyWallet).slice(0, 2)];
    const contracts = [a.busyToken, a.tokens[1] as string];
    const start = sim.head() - 120;
    const list = await once(
      "list",
      configFor(
        "list",
        start,
        `  - { name: pools, contracts: [${contracts.map((c) => `"${c}"`).join(", ")}], events: ["${TRANSFER}"] }
  - { name: deposits, accounts: [${wallets.map((w) => `"${w}"`).join(", ")}], tokens: ["${a.busyToken}"], sources: [nft_transfers] }`,
        `  - { name: pool-transfers, watch: pools, notify: [out] }
  - { name: deposit-tokens, watch: deposits, source: event_logs, notify: [out] }
  - { name: deposit-nfts, watch: deposits, source: nft_transfers, notify: [out] }`,
      ),
    );
    const single = await once(
      "single",
      configFor(
        "single",
        start,
        [...contracts.map((c, i) => `  - { name: c${i}, contract: "${c}", events: ["${TRANSFER}"] }`), ...wallets.map((w, i) => `  - { name: w${i}, account: "${w}", tokens: ["${a.busyToken}"], sources: [nft_transfers] }`)].join("\n"),
        [
          ...contracts.map((_, i) => `  - { name: c${i}-transfers, watch: c${i}, notify: [out] }`),
          ...wallets.flatMap((_, i) => [`  - { name: w${i}-tokens, watch: w${i}, source: event_logs, notify: [out] }`, `  - { name: w${i}-nfts, watch: w${i}, source: nft_transfers, notify: [out] }`]),
        ].join("\n"),
      ),
    );
    expect(list.operations.sort()).toEqual(["nodeEventLogs", "nodeNftTransfers"]);
    expect(single.operations.every((op) => op !== "nodeEventLogs" && op !== "nodeNftTransfers")).toBe(true);

    const pairs = [
      [(r: string) => r === "pool-transfers", (r: string) => /^c\d-transfers$/.test(r)],
      [(r: string) => r === "deposit-tokens", (r: string) => /^w\d-tokens$/.test(r)],
      [(r: string) => r === "deposit-nfts", (r: string) => /^w\d-nfts$/.test(r)],
    ] as const;
    for (const [listRule, singleRule] of pairs) {
      const listed = keysBy(list.alerts, listRule);
      expect(listed.size).toBeGreaterThan(10);
      expect([...listed].sort()).toEqual([...keysBy(single.alerts, singleRule)].sort());
      // One alert a record and rule: a transfer between two listed wallets is one, where one watch each made two.
      expect(list.alerts.filter((x) => listRule(x.rule)).length).toBe(listed.size);
    }

    // The alert names the listed account the transfer is from, else the one it is to.
    const listedSet = new Set(wallets.map((w) => w.toLowerCase()));
    const deposits = list.alerts.filter((x) => x.rule.startsWith("deposit-"));
    for (const alert of deposits) {
      const { from, to } = partiesOf(alert);
      const party = listedSet.has(from) ? from : (to as string);
      expect(alert.links.account, alert.id).toBe(`https://kaiascan.io/account/${party}`);
    }
    const between = deposits.filter((x) => {
      const { from, to } = partiesOf(x);
      return listedSet.has(from) && to !== undefined && listedSet.has(to);
    });
    expect(between.length).toBeGreaterThan(0);
  });

  it("has direction relative to the list: out from one, in to one, self between two", async () => {
    const a = sim.addresses;
    const wallets = [a.busyWallet, ...a.wallets.filter((w) => w !== a.busyWallet).slice(0, 2)];
    const listedSet = new Set(wallets.map((w) => w.toLowerCase()));
    const { alerts } = await once(
      "direction",
      configFor(
        "direction",
        sim.head() - 120,
        `  - { name: deposits, accounts: [${wallets.map((w) => `"${w}"`).join(", ")}], tokens: ["${a.busyToken}"], sources: [nft_transfers] }`,
        ["in", "out", "self"].flatMap((d) => [`  - { name: tokens-${d}, watch: deposits, source: event_logs, when: { direction: ${d} }, notify: [out] }`, `  - { name: nfts-${d}, watch: deposits, source: nft_transfers, when: { direction: ${d} }, notify: [out] }`]).join("\n"),
      ),
    );
    const expected = (alert: AlertDocument) => {
      const { from, to } = partiesOf(alert);
      const out = listedSet.has(from);
      const into = to !== undefined && listedSet.has(to);
      return out && into ? "self" : out ? "out" : "in";
    };
    for (const d of ["in", "out", "self"]) expect(alerts.filter((x) => x.rule.endsWith(`-${d}`)).length, d).toBeGreaterThan(0);
    for (const alert of alerts) expect(alert.rule.split("-")[1], alert.id).toBe(expected(alert));
    // Every record once: the three directions do not overlap and leave none out.
    expect(new Set(alerts.map((x) => `${x.source} ${recordKeyOf(x)}`)).size).toBe(alerts.length);
  });
});
