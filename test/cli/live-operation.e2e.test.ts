import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulator } from "../../src/simulator/index.js";
import { logLines, startKaiawatch, waitForStatusUrl } from "../helpers/child.js";
import { freePort } from "../helpers/free-port.js";
import { configFromText, tempDir } from "../helpers/harness.js";
import { simulatorHead, writeConfig } from "../helpers/simulator-config.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { startReceiver } from "../notify/receiver.js";
import { runCli } from "../helpers/run-cli.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * Operating a running daemon from the CLI, like amtool against a running Alertmanager: the
 * daemon (`kaiawatch run`, a real child process) holds the store's lock, and `outbox retry`,
 * `replay --send`, `silence add` and `cursors --set` change it all the same, through its status API (here
 * without a token: from loopback only), each change logged by the daemon.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a running daemon operated from the CLI", () => {
  it("re-queues dead letters, adds a silence and moves a cursor while it holds the lock", { timeout: 90_000 }, async () => {
    const sim = await createSimulator({ seed: 3, initialBlocks: 10, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    let hookStatus = 400;
    const receiver = await startReceiver((res) => {
      res.writeHead(hookStatus, { "content-type": "text/plain" });
      res.end(hookStatus === 200 ? "ok" : "bad request");
    });
    const dir = tempDir();
    cleanups.push(async () => {
      await receiver.close();
      await sim.close();
      dir.remove();
    });
    const port = await freePort();
    const config = writeConfig(
      dir.path,
      `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), listen: `127.0.0.1:${port}`, requestsPerSecond: 500 })}
defaults: { schedule: "* * * * * *", start: ${sim.head()}, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: calls, watch: wallet, summary: "call to {{to}}", notify: [hook] }
sinks:
  hook: { type: webhook, url: "${receiver.url}/hook", allow_http: true }
`,
    );
    // On the FREE plan the planner reads the wallet through operation 8 (every block, shared):
    // `cursors --set wallet=…` moves the wallet's position, kept under its own source's key.
    const walletKey = planFromConfig(configFromText(readFileSync(config, "utf8")), { compile: false }).sources[0]!.members!.find((m) => m.watch === "wallet")!.ownKey;
    const daemon = startKaiawatch(["run", "--config", config, "--log-format", "json"]);
    cleanups.push(async () => {
      if (daemon.process.exitCode === null) {
        daemon.process.kill("SIGKILL");
        await daemon.exited;
      }
    });
    const contracts = sim.addresses.contracts;
    const call = (i: number) => ({ from: sim.addresses.busyWallet, to: contracts[i % contracts.length]!, amount: "1" });
    await waitForStatusUrl(daemon);

    // Two calls, both refused by the receiver (HTTP 400): two dead letters.
    const first = sim.addBlock({ internalTransactions: [call(0), call(1)] });
    const statusOf = async () => (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { dead_letters_total: number; sources: Array<{ key: string; cursor: number | null }>; silences: Array<{ rule: string }> };
    await waitFor(async () => (await statusOf()).dead_letters_total === 2, 20_000, "two dead letters in the daemon's /status");

    // 1. Dead letters: the daemon holds the lock, so retry asks it, and it sends them at once.
    hookStatus = 200;
    const retry = await runCli("outbox", "retry", "--all", "--config", config);
    expect(retry.err).toBe("");
    expect(retry.out).toContain("Requeued 2 dead letters; the running daemon");
    expect(retry.code).toBe(0);
    await waitFor(() => receiver.requests.filter((r) => r.url === "/hook").length === 4, 20_000, "four deliveries at the receiver");
    expect((await statusOf()).dead_letters_total).toBe(0);

    // replay --send while the daemon runs: the matches go to the daemon, which queues them
    // under their alert ids (here already in its outbox, so nothing is sent twice).
    const replayed = await runCli("replay", "--config", config, "--rule", "calls", "--from", String(first), "--to", String(first), "--send");
    expect(replayed.err).toBe("");
    expect(replayed.code).toBe(0);
    expect(replayed.out).toContain(`Queued 0 of 2 alerts in the running daemon (http://127.0.0.1:${port}), which sends them now (2 were already in the outbox).`);

    // 2. A silence, written into the store beside the running daemon, holds back the next alert.
    const silence = await runCli("silence", "add", "--rule", "calls", "--for", "1h", "--reason", "maintenance window", "--config", config);
    expect(silence.err).toBe("");
    expect(silence.code).toBe(0);
    expect(silence.out).toMatch(/^Silence sil_[0-9a-f]{8} added: rule calls/);
    expect((await statusOf()).silences.map((s) => s.rule)).toEqual(["calls"]);
    sim.addBlock({ internalTransactions: [call(2)] });
    const silencedAt = sim.head();
    await waitFor(async () => (await statusOf()).sources[0]!.cursor === silencedAt, 20_000, `the cursor at block ${silencedAt}`);
    expect(receiver.requests.filter((r) => r.url === "/hook")).toHaveLength(4);
    // The held-back alert was never sent: listed as suppressed, not as delivered, by the CLI and /status.
    const delivered = await runCli("outbox", "--state", "delivered", "--json", "--config", config);
    const states = delivered.out.trim().split("\n").map((line) => JSON.parse(line) as { state: string; suppressed_by?: string });
    expect(states.map((e) => e.state)).toEqual(["delivered", "delivered"]);
    const held = await runCli("outbox", "--state", "suppressed", "--json", "--config", config);
    expect(held.out.trim().split("\n").map((line) => JSON.parse(line) as { state: string; suppressed_by?: string })).toEqual([expect.objectContaining({ state: "suppressed", suppressed_by: "silence" })]);
    const newest = ((await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as { alerts: Array<{ deliveries: Array<{ state: string }> }> }).alerts[0]!;
    expect(newest.deliveries.map((d) => d.state)).toEqual(["suppressed"]);

    // 3. Move the cursor back before the first block: the daemon rescans it (same alert ids, so nothing is queued twice).
    const move = await runCli("cursors", "--config", config, "--set", `wallet=${first - 1}`);
    expect(move.err).toBe("");
    expect(move.code).toBe(0);
    expect(move.out).toContain(`${walletKey} (wallet): ${silencedAt} → ${first - 1} (moved by the running daemon`);
    // ... and forward to latest, again while it runs.
    sim.addBlock({});
    const latest = await runCli("cursors", "--config", config, "--set", "wallet=latest");
    expect(latest.code).toBe(0);
    await waitFor(async () => (await statusOf()).sources[0]!.cursor === sim.head(), 20_000, "the cursor at the head");

    // Every write through the status API is in the daemon's log, with who made it.
    const writes = logLines(daemon).filter((l) => / through the status API$/.test(l.msg));
    expect(writes.map((l) => l.msg)).toEqual(["dead letters re-queued through the status API", "alerts queued through the status API", "cursor moved through the status API", "cursor moved through the status API"]);
    // The commands sent the write token the daemon made at its start (status.write_token_file).
    expect(writes.every((l) => l.by === "token" && typeof l.peer === "string")).toBe(true);
    expect(writes[1]).toMatchObject({ rules: ["calls"], alerts: 2, queued: 0, already_queued: 2 });
    expect(writes[2]).toMatchObject({ source: walletKey, to: first - 1 });
    // The silence was written into the store beside the daemon, which logged it when it read it.
    expect(logLines(daemon).some((l) => l.msg === "silences changed")).toBe(true);

    daemon.process.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
  });
});
