import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { quietCommon, tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { openStore } from "../../src/store/open-store.js";
import { simulatorHead } from "../helpers/simulator-config.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TX_CALLS = `0x${"a1".repeat(32)}`;
const TX_CALLS_AND_LOG = `0x${"b2".repeat(32)}`;
const TX_LOGS = `0x${"c3".repeat(32)}`;

interface Setup {
  sim: Simulator;
  config: string;
  wallet: string;
  callsBlock: number;
}

async function setup(extra = ""): Promise<Setup> {
  const sim = await createSimulator({ seed: 3, initialBlocks: 5 });
  const dir = tempDir();
  cleanups.push(async () => {
    await sim.close();
    dir.remove();
  });
  const [wallet, other] = sim.addresses.wallets as [string, string];
  const [token, otherToken] = sim.addresses.tokens as [string, string];
  // Just under and just over the threshold, in one transaction.
  const callsBlock = sim.addBlock({
    internalTransactions: [
      { transaction_hash: TX_CALLS, from: wallet, to: other, amount: "999.999999999999999999" },
      { transaction_hash: TX_CALLS, from: wallet, to: other, amount: "1000" },
    ],
  });
  // An internal transaction whose transaction also emitted a log: its block can be found without --block.
  sim.addBlock({
    eventLogs: [{ transaction_hash: TX_CALLS_AND_LOG, contract_address: token }],
    internalTransactions: [{ transaction_hash: TX_CALLS_AND_LOG, from: other, to: wallet, amount: "5000" }],
  });
  const transfer = (value: string) => [
    { name: "from", value: wallet },
    { name: "to", value: other },
    { name: "value", value },
  ];
  sim.addBlock({
    eventLogs: [
      { transaction_hash: TX_LOGS, contract_address: token, items: transfer("999999") },
      { transaction_hash: TX_LOGS, contract_address: token, items: transfer("1000000") },
      { transaction_hash: TX_LOGS, contract_address: otherToken, items: transfer("5000000") },
    ],
  });
  const config = join(dir.path, "config.yaml");
  writeFileSync(
    config,
    `
${simulatorHead(sim, { storePath: join(dir.path, "store.json") })}
watches:
  - { name: wallet, account: "${wallet}", sources: [internal_transactions] }
  - { name: token, contract: "${token}", events: ["Transfer(address,address,uint256)"] }
rules:
  - name: big-outflow
    watch: wallet
    when: { all: [ { from: "${wallet}" }, { amount: { gte: "1000 KAIA" } } ] }
    notify: [out]
  - name: big-transfer
    watch: token
    when: { args.value: { gte: "1000000 base_units" } }
    notify: [out]
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
${extra}`,
  );
  return { sim, config, wallet, callsBlock };
}

/**
 * A simulator without generated records, and `configWith(body)`: a config file of the
 * simulator's head and `body` (watches, rules, sinks), its path. Both removed after the test.
 */
async function emptyChain(): Promise<{ sim: Simulator; configWith: (body: string) => string }> {
  const sim = await createSimulator({ seed: 3, initialBlocks: 5, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  const dir = tempDir();
  cleanups.push(async () => {
    await sim.close();
    dir.remove();
  });
  const configWith = (body: string) => {
    const path = join(dir.path, "config.yaml");
    writeFileSync(path, `\n${simulatorHead(sim, { storePath: join(dir.path, "store.json") })}\n${body}`);
    return path;
  };
  return { sim, configWith };
}

/** KIP-7 Transfer logs of `token` in transaction `tx`, as the node emits them: topics and data, no decoded items. */
const tokenTransfer = (tx: string, token: string) => (from: string, to: string, value: bigint) => ({
  transaction_hash: tx,
  contract_address: token,
  type: "Transfer",
  topics: [EVENTS.transfer20.topic0, padAddress(from), padAddress(to)],
  data: `0x${uint256Hex(value)}`,
  items: [],
});

/** The lines of record N's explanation (from its header to the next record or the summary). */
function recordSection(stdout: string, n: number): string {
  // At a line's start: "topics[2] " inside a record is not record 2.
  const start = stdout.indexOf(`\n[${n}] `) + 1;
  expect(start, `record ${n} is explained`).toBeGreaterThan(0);
  const rest = stdout.slice(start);
  const end = rest.indexOf("\n\n");
  return end < 0 ? rest : rest.slice(0, end);
}

describe("kaiawatch explain", () => {
  it("names the failing condition for amounts planted just under and just over a threshold", async () => {
    const s = await setup();
    const result = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS, "--block", String(s.callsBlock));
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out).toContain(`in block ${s.callsBlock}: 2 internal transactions`);

    const under = recordSection(result.out, 1);
    expect(under).toContain("999.999999999999999999 KAIA");
    expect(under).toContain("✗ NO MATCH");
    expect(under).toContain("✗ all of:");
    expect(under).toContain(`✓ from ${s.wallet} = ${s.wallet}`);
    expect(under).toContain("✗ amount 999.999999999999999999 KAIA < 1000 KAIA");

    const over = recordSection(result.out, 2);
    expect(over).toContain("✓ MATCH: would alert out");
    expect(over).toContain("✓ all of:");
    expect(over).toContain("✓ amount 1000 KAIA >= 1000 KAIA");
    expect(result.out).toContain("1 of 2 records would alert");
  });

  it("names the inhibit rule that would hold a matching alert back, and the source firing now", async () => {
    const s = await setup(`inhibit_rules:
  - source_matchers: ['kind="source_failing"']
    target_matchers: ['source!=kaiawatch']
    equal: [watch]
`);
    const explain = () => runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS, "--block", String(s.callsBlock));
    const quiet = await explain();
    expect(quiet.out).toContain(`inhibited by inhibit_rules[0]: source_matchers [kind="source_failing"] target_matchers [source!="kaiawatch"] equal [watch] (no such source fires now)`);
    expect(quiet.out).not.toContain("HELD BACK");

    // The wallet's source fails, as the daemon's operational monitor stores it.
    const common = quietCommon();
    const store = await openStore(common, { path: join(s.config, "..", "store.json") });
    const monitor = await createOperationalMonitor(common, { store, sinks: [], network: "mainnet", head: () => 10, onQueued: () => {} });
    await monitor.update([{ key: "source_failing:src_w", kind: "source_failing", summary: "source wallet (src_w) is failing", detail: { source: "src_w", watch: "wallet" } }]);
    await store.close();

    const held = await explain();
    expect(held.code).toBe(0);
    expect(recordSection(held.out, 2)).toMatch(/✗ HELD BACK by inhibit_rules\[0\] while kw_\S+ fires \(source wallet \(src_w\) is failing\): recorded as inhibited, not sent/);
    // A record the rule does not match says nothing about inhibition.
    expect(recordSection(held.out, 1)).not.toContain("HELD BACK");
  });

  it("says when an active silence would hold a matching alert back", async () => {
    const s = await setup();
    const added = await runCli("silence", "add", "--config", s.config, "--rule", "big-outflow", "--match", `from=${s.wallet}`, "--for", "1h", "--reason", "treasury migration");
    expect(added.code).toBe(0);
    const id = /Silence (sil_[0-9a-f]+) added/.exec(added.out)![1]!;
    const result = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS, "--block", String(s.callsBlock));
    expect(result.code).toBe(0);
    const over = recordSection(result.out, 2);
    expect(over).toContain("✓ MATCH: would alert out");
    expect(over).toContain(`✗ HELD BACK while silence ${id} is active`);
    expect(over).toContain("treasury migration");
    // A record the rule does not match says nothing about silences.
    expect(recordSection(result.out, 1)).not.toContain("HELD BACK");
    await runCli("silence", "remove", "--config", s.config, id);
    expect((await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS, "--block", String(s.callsBlock))).out).not.toContain("HELD BACK");
  });

  it("finds an internal transaction's block from its logs, and asks for --block when nothing tells it", async () => {
    const s = await setup();
    const found = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS_AND_LOG);
    expect(found.err).toBe("");
    expect(found.code).toBe(0);
    expect(found.out).toContain("1 internal transactions");
    // The call goes into the wallet: the amount passes, the sender does not.
    expect(found.out).toContain("✓ amount 5000 KAIA >= 1000 KAIA");
    expect(found.out).toMatch(/✗ from 0x[0-9a-f]{40} != 0x[0-9a-f]{40}/);

    const unknownBlock = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", TX_CALLS);
    expect(unknownBlock.code).toBe(1);
    expect(unknownBlock.err).toContain("pass --block");

    const unknownTx = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", `0x${"0f".repeat(32)}`);
    expect(unknownTx.code).toBe(1);
    expect(unknownTx.err).toContain("does not know transaction");
  });

  it("explains event logs through their decoded arguments and marks a log the watch's query never returns", async () => {
    const s = await setup();
    const result = await runCli("explain", "--config", s.config, "--rule", "big-transfer", "--tx", TX_LOGS);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(recordSection(result.out, 1)).toContain("✗ args.value 999999 < 1000000");
    expect(recordSection(result.out, 2)).toContain("✓ args.value 1000000 >= 1000000");
    const elsewhere = recordSection(result.out, 3);
    // The condition alone holds; the watch's query (another contract) never returns the log.
    expect(elsewhere).toContain("✓ args.value 5000000 >= 1000000");
    expect(elsewhere).toContain("NO ALERT: the watch's query does not return this record");
    expect(elsewhere).toContain("not by the watched contract");
    expect(result.out).toContain("1 of 3 records would alert");
  });

  it("gives usage errors for a malformed hash and an unknown rule", async () => {
    const s = await setup();
    const bad = await runCli("explain", "--config", s.config, "--rule", "big-outflow", "--tx", "0x1234");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("transaction hash");
    const typo = await runCli("explain", "--config", s.config, "--rule", "big-outflw", "--tx", TX_CALLS);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('did you mean "big-outflow"');
  });
});

describe("kaiawatch explain on a token watch", () => {
  it("shows amounts in the token's units, and says when a transfer is not the wallet's", async () => {
    const { sim, configWith } = await emptyChain();
    const [wallet, other, stranger] = sim.addresses.wallets as [string, string, string];
    const usdt = sim.addresses.tokens[1] as string;
    const tx = `0x${"d4".repeat(32)}`;
    const transfer = tokenTransfer(tx, usdt);
    sim.addBlock({ eventLogs: [transfer(wallet, other, 999_999n), transfer(wallet, other, 1_000_000n), transfer(other, stranger, 5_000_000n)] });
    const config = configWith(`watches:
  - { name: hot, account: "${wallet}", tokens: ["${usdt}"] }
rules:
  - { name: usdt-out, watch: hot, when: { direction: out, amount: { gte: "1 USDT" } }, notify: [out] }
sinks:
  out: { type: console }
`);
    const result = await runCli("explain", "--config", config, "--rule", "usdt-out", "--tx", tx);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const under = recordSection(result.out, 1);
    expect(under).toContain("✗ NO MATCH");
    expect(under).toContain("✗ amount 0.999999 USDT < 1 USDT");
    const exact = recordSection(result.out, 2);
    expect(exact).toContain("✓ MATCH: would alert out");
    expect(exact).toContain("✓ amount 1 USDT >= 1 USDT");
    expect(recordSection(result.out, 3)).toContain(`✗ NO ALERT: neither from nor to is the watched wallet ${wallet.toLowerCase()}`);
    expect(result.out).toContain("1 of 3 records would alert");
  });

  it("explains an accounts watch's token transfers relative to the listed accounts", async () => {
    const { sim, configWith } = await emptyChain();
    const [wallet, other, stranger, deposit] = sim.addresses.wallets as [string, string, string, string];
    const usdt = sim.addresses.tokens[1] as string;
    const tx = `0x${"e5".repeat(32)}`;
    const transfer = tokenTransfer(tx, usdt);
    sim.addBlock({ eventLogs: [transfer(other, wallet, 2_000_000n), transfer(wallet, deposit, 3_000_000n), transfer(other, stranger, 5_000_000n)] });
    const config = configWith(`watches:
  - { name: deposits, accounts: ["${wallet}", "${deposit}"], tokens: ["${usdt}"] }
rules:
  - { name: usdt-in, watch: deposits, source: event_logs, when: { direction: in, amount: { gte: "1 USDT" } }, notify: [out] }
sinks:
  out: { type: console }
`);
    const result = await runCli("explain", "--config", config, "--rule", "usdt-in", "--tx", tx);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const incoming = recordSection(result.out, 1);
    expect(incoming).toContain("✓ MATCH: would alert out");
    expect(incoming).toContain("✓ direction in = in");
    expect(incoming).toContain("✓ amount 2 USDT >= 1 USDT");
    // Between two listed accounts: neither in nor out of the list.
    expect(recordSection(result.out, 2)).toContain("✗ direction self != in");
    expect(recordSection(result.out, 3)).toContain("✗ NO ALERT: neither from nor to is one of the 2 watched accounts");
    expect(result.out).toContain("1 of 3 records would alert");
  });
});
