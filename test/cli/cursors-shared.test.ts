import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestCommon } from "../../src/common/common.js";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { freePort } from "../helpers/free-port.js";
import { configFromText, tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { runCli } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * `kaiawatch cursors --set` when the planner serves watches from shared sources (issue 16):
 * a watch name moves that watch alone (its position), on a stopped daemon and through a
 * running one; a shared source's key moves every watch it serves; a watch name that would
 * move other watches too is refused, naming the key that does.
 */
let sim: Simulator;
const dir = tempDir("kaiawatch-cursors-shared-");
const configPath = join(dir.path, "config.yaml");
let start: number;
let port: number;

beforeAll(async () => {
  sim = await createSimulator({ seed: 43, initialBlocks: 60 }); // frozen: blocks come only from the test
  start = sim.head() - 40;
  port = await freePort();
  const { busyWallet, wallets, busyToken } = sim.addresses;
  const other = wallets.find((w) => w !== busyWallet)!;
  writeConfig(
    dir.path,
    `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), listen: `127.0.0.1:${port}` })}
# Once a day (it must fire on the planner's reference day to be costed): the ticks are the test's own.
defaults: { schedule: "0 0 0 * * *", start: ${start}, jitter: 0s }
watches:
  - { name: hot, account: "${busyWallet}", sources: [internal_transactions] }
  - { name: other, account: "${other}", sources: [internal_transactions] }
  - { name: token, contract: "${busyToken}" }
  - { name: transfers, contract: "${busyToken}", events: ["Transfer(address,address,uint256)"] }
rules:
  - { name: hot-calls, watch: hot, notify: [out] }
  - { name: other-calls, watch: other, notify: [out] }
  - { name: token-logs, watch: token, notify: [out] }
  - { name: transfer-logs, watch: transfers, notify: [out] }
sinks: { out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" } }
`,
  );
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});


const loadConfig = () => configFromText(readFileSync(configPath, "utf8"));

/** One pass of a daemon over the store (the daemon stopped afterwards): each source's matches. */
async function pass(): Promise<{ head: number; matches: Record<string, number>; keys: Record<string, string> }> {
  const daemon = await createDaemon(createTestCommon(), { config: loadConfig() });
  try {
    const { head, results } = await daemon.engine.runOnce();
    const failed = results.find((r) => r.error !== undefined);
    if (failed) throw new Error(`${failed.key}: ${failed.error}`);
    return { head, matches: Object.fromEntries(results.map((r) => [r.key, r.result?.alerts ?? 0])), keys: keysOf(daemon) };
  } finally {
    await daemon.stop();
  }
}

/** The keys the test moves: the shared op 8 source, the op 11 source, and each watch's own key. */
function keysOf(daemon: Daemon): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const source of daemon.plan.sources) {
    keys[source.definition.operation] = source.key;
    for (const member of source.members ?? []) keys[member.watch] = member.ownKey;
  }
  return keys;
}

describe("kaiawatch cursors --set with shared sources", () => {
  it("moves one watch's position alone, a shared source's key moves all its watches, and a watch that would move others is refused", async () => {
    const first = await pass();
    const { keys } = first;
    const op8 = keys.blockInternalTransactions!;
    const op11 = keys.accountEventLogs!;
    expect(keys.token).toBe(op11); // token's own source is the one transfers shares
    const listed = await runCli("cursors", "--config", configPath);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${keys.hot}  hot`);
    expect(listed.out).toContain(`position of watch hot, served by ${op8}`);
    expect(listed.out).not.toContain("not in config");

    const back = first.head - 10;
    const hot = await runCli("cursors", "--config", configPath, "--set", `hot=${back}`);
    expect(hot.err).toBe("");
    expect(hot.out).toContain(`${keys.hot} (hot): ${first.head} → ${back}\nTo undo: kaiawatch cursors --set ${keys.hot}=${first.head} --yes\nSOURCE`);

    const refused = await runCli("cursors", "--config", configPath, "--set", `token=${back}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`watch "token" is read through source ${op11}, which also serves "transfers": moving it would move them too. To move all of them, name the source: --set ${op11}=${back}`);

    const all = await runCli("cursors", "--config", configPath, "--set", `${op11}=${back}`);
    expect(all.out).toContain(`${op11} (token): ${first.head} → ${back}\n${keys.transfers} (transfers): ${first.head} → ${back}\nTo undo: kaiawatch cursors --set ${op11}=${first.head} --set ${keys.transfers}=${first.head} --yes\nSOURCE`);

    // The next pass scans (back, head] again: for hot alone on op 8 (other skips what it had),
    // and for both watches of op 11.
    const again = await pass();
    const { busyWallet, busyToken } = sim.addresses;
    const hotCalls = sim.truth.accountInternalTransactions(busyWallet, { from: back + 1, to: again.head }).length;
    const logs = sim.truth.accountEventLogs(busyToken, { from: back + 1, to: again.head });
    const transfers = logs.filter((log) => log.topics[0]?.toLowerCase() === "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef").length;
    expect(hotCalls).toBeGreaterThan(0);
    expect(again.matches[op8]).toBe(hotCalls);
    expect(again.matches[op11]).toBe(logs.length + transfers);
  }, 60_000);

  it("through a running daemon: a watch's position moves, not the shared source's cursor", async () => {
    const daemon = await createDaemon(createTestCommon(), { config: loadConfig() });
    try {
      await daemon.start();
      const keys = keysOf(daemon);
      const head = sim.head();
      await waitFor(async () => (await daemon.store.getCursor(keys.blockInternalTransactions!))?.block === head, 20_000, "the shared source's cursor at the head");
      const moved = await runCli("cursors", "--config", configPath, "--set", `other=${head - 5}`);
      expect(moved.err).toBe("");
      expect(moved.out).toBe(
        `Moving ${keys.other} (other) from ${head} to ${head - 5}: scans 5 blocks (${head - 4}–${head}) up to the indexed head: at least 5 credits in 5 requests, 1s or more at explorer.requests_per_second.\n` +
          `${keys.other} (other): ${head} → ${head - 5} (moved by the running daemon at http://127.0.0.1:${port})\n` +
          `To undo: kaiawatch cursors --set ${keys.other}=${head} --yes\n`,
      );
      expect((await daemon.store.getCursor(keys.other!))?.block).toBe(head - 5);
      expect((await daemon.store.getCursor(keys.hot!))?.block).toBe(head);
      expect((await daemon.store.getCursor(keys.blockInternalTransactions!))?.block).toBe(head);
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
