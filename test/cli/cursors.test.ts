import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { openStore } from "../../src/store/open-store.js";
import { quietCommon, tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";

let sim: Simulator;
// Each test has a store of its own, so that none depends on what another ran before it (the
// suite runs them in any order with --sequence.shuffle); the simulator is shared.
let dir: ReturnType<typeof tempDir>;
let configPath: string;
let storePath: string;

beforeAll(async () => {
  sim = await createSimulator({ seed: 41, initialBlocks: 30 });
});
beforeEach(() => {
  dir = tempDir("kaiawatch-cursors-");
  configPath = join(dir.path, "config.yaml");
  storePath = join(dir.path, "store.json");
  writeFileSync(
    configPath,
    `
explorer: { base_url: "${sim.url}" }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${storePath}" }
status: { listen: false }
defaults: { start: "-10", jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions], via: own }
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: wallet-nft, watch: wallet, source: nft_transfers, notify: [out] }
  - { name: wallet-calls, watch: wallet, source: internal_transactions, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`,
  );
});
afterEach(() => dir.remove());
afterAll(async () => {
  await sim.close();
});

/** Every source scanned up to the head: the state the moves below start from. */
async function scanned(): Promise<void> {
  expect((await runCli("once", "--config", configPath, "--log-level", "silent")).code).toBe(0);
}


describe("kaiawatch cursors", () => {
  it("lists every source of the config, with '-' before the first scan and the cursor after it", async () => {
    const before = await runCli("cursors", "--config", configPath);
    expect(before.code).toBe(0);
    const rows = before.out.trim().split("\n").slice(1);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.split(/\s{2,}/)[2]).toBe("-");

    expect((await runCli("once", "--config", configPath, "--log-level", "silent")).code).toBe(0);
    const after = await runCli("cursors", "--config", configPath);
    for (const row of after.out.trim().split("\n").slice(1)) expect(row.split(/\s{2,}/)[2]).toBe(String(sim.head()));
  });

  it("--set moves a watch's only source by name, and a source by key; the next scan resumes at BLOCK + 1", async () => {
    await scanned();
    const rewind = sim.head() - 5;
    const set = await runCli("cursors", "--config", configPath, "--set", `token=${rewind}`);
    expect(set.code).toBe(0);
    expect(set.out).toMatch(new RegExp(`\\(token\\): ${sim.head()} → ${rewind}`));

    const store = await openStore(quietCommon(), { path: storePath, readOnly: true });
    const tokenCursor = (await store.listCursors()).find((c) => c.watch === "token")!;
    const walletCalls = (await store.listCursors()).find((c) => c.watch === "wallet" && c.source === "internal_transactions")!;
    await store.close();
    expect(tokenCursor.block).toBe(rewind);

    expect((await runCli("cursors", "--config", configPath, "--set", `${walletCalls.key}=${rewind}`)).code).toBe(0);
    const again = await runCli("once", "--config", configPath, "--log-level", "silent");
    expect(again.code).toBe(0);
    // The rewound sources scanned (BLOCK, head] again; the one left alone scanned nothing.
    const head = sim.head();
    const { busyToken, busyWallet } = sim.addresses;
    const tokenRecords = sim.truth.accountEventLogs(busyToken, { from: rewind + 1, to: head }).length;
    const callRecords = sim.truth.accountInternalTransactions(busyWallet, { from: rewind + 1, to: head }).length;
    expect(tokenRecords + callRecords).toBeGreaterThan(0);
    expect(again.out).toContain(`token: event logs of ${busyToken}: cursor ${head}, ${tokenRecords} records`);
    expect(again.out).toContain(`wallet: internal transactions of account ${busyWallet}: cursor ${head}, ${callRecords} records`);
    expect(again.out).toContain(`wallet: NFT transfers of account ${busyWallet}: cursor ${head}, 0 records`);
  });

  it("names the choices when a watch has several sources, and refuses a malformed --set", async () => {
    const ambiguous = await runCli("cursors", "--config", configPath, "--set", "wallet=1");
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toMatch(/watch "wallet" has 2 sources; name one by its key: src_[0-9a-f]{16}, src_[0-9a-f]{16}/);
    for (const bad of ["token", "token=abc", "nosuch=5", "token=-5", "token=1.5"]) {
      const result = await runCli("cursors", "--config", configPath, "--set", bad);
      expect(result.code).toBe(2);
      expect(result.err).not.toMatch(/\n\s+at /);
    }
    // A negative block names the rule rather than failing every tick later.
    const negative = await runCli("cursors", "--config", configPath, "--set", "token=-5");
    expect(negative.err).toContain('BLOCK must be a block number (0 or more) or latest, got "token=-5"');
  });

  it("refuses --set while a daemon holds the store, and still lists", async () => {
    const holder = await openStore(quietCommon(), { path: storePath });
    try {
      const set = await runCli("cursors", "--config", configPath, "--set", `token=${sim.head() - 1}`);
      expect(set.code).toBe(1);
      expect(set.err).toContain("KW_STORE_LOCKED");
      // The config has no status server: the command says it cannot ask the daemon instead.
      expect(set.err).toContain("The daemon cannot be asked instead: status.listen is false");
      expect((await runCli("cursors", "--config", configPath)).code).toBe(0);
    } finally {
      await holder.close();
    }
  });

  it("shows a move's cost, refuses one above the threshold without --yes, and prints how to undo it", async () => {
    await scanned();
    const head = sim.head();
    const before = (await runCli("cursors", "--config", configPath)).out;
    // A typo the other way: a block far past the head (the source would scan nothing for days).
    const past = await runCli("cursors", "--config", configPath, "--set", `token=${head + 1_000_000}`);
    expect(past.code).toBe(2);
    expect(past.out).toMatch(new RegExp(`^Moving src_[0-9a-f]+ \\(token\\) from \\d+ to ${head + 1_000_000}: puts the cursor past the head the explorer has indexed \\(${head}\\)`, "m"));
    expect(past.err).toContain("nothing was moved. A move whose catch-up is estimated above 1000 credits, or that puts a cursor past the indexed head, needs --yes");
    expect((await runCli("cursors", "--config", configPath)).out).toBe(before);

    const back = await runCli("cursors", "--config", configPath, "--set", `token=${head - 4}`);
    expect(back.err).toBe("");
    expect(back.code).toBe(0);
    const from = /\(token\) from (\d+) to/.exec(back.out)![1];
    expect(back.out).toMatch(new RegExp(`to ${head - 4}: scans 4 blocks \\(${head - 3}–${head}\\) up to the indexed head: at least 3 credits in 1 request, 1s or more`));
    expect(back.out).toMatch(new RegExp(`^To undo: kaiawatch cursors --set src_[0-9a-f]+=${from} --yes$`, "m"));
  });

  it("refuses a move whose catch-up costs more than the threshold without --yes, showing its cost", async () => {
    // Operation 8 (internal transactions of every block, 1 credit a block) over 1001 blocks: 1001 credits.
    const many = await createSimulator({ seed: 42, initialBlocks: 1010 });
    const config = join(dir.path, "op8.yaml");
    writeFileSync(
      config,
      `
explorer: { base_url: "${many.url}" }
chain: { rpc_url: "${many.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "op8.db")}" }
status: { listen: false }
defaults: { start: latest }
watches: [{ name: hot, account: "${many.addresses.busyWallet}", sources: [internal_transactions], via: shared }]
rules: [{ name: calls, watch: hot, notify: [out] }]
sinks: { out: { type: console } }
`,
    );
    try {
      const target = many.head() - 1001;
      const refused = await runCli("cursors", "--config", config, "--set", `hot=${target}`);
      expect(refused.code).toBe(2);
      expect(refused.out).toMatch(/from none to \d+: scans 1001 blocks \(\d+–\d+\) up to the indexed head: at least 1001 credits in 1001 requests, 3m21s or more/);
      expect(refused.err).toContain("needs --yes");
      const listed = await runCli("cursors", "--config", config);
      expect(listed.out).not.toContain(String(target));
      const yes = await runCli("cursors", "--config", config, "--set", `hot=${target}`, "--yes");
      expect(yes.code).toBe(0);
      expect(yes.out).toContain(`→ ${target}`);
    } finally {
      await many.close();
    }
  });

  it("--set NAME=latest skips to the head the explorer has indexed", async () => {
    sim.mine(3);
    const latest = await runCli("cursors", "--config", configPath, "--set", "token=latest");
    expect(latest.err).toBe("");
    expect(latest.code).toBe(0);
    expect(latest.out).toMatch(new RegExp(`^src_[0-9a-f]+ \\(token\\): (\\d+|none) → ${sim.head()}$`, "m"));
  });
});
