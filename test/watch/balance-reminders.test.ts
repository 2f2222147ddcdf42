import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { createOperationalMonitor } from "../../src/daemon/operational-monitor.js";
import { repeatIntervalsOf } from "../../src/daemon/repeat-interval.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator } from "../../src/simulator/index.js";
import { openStore } from "../../src/store/open-store.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { startReceiver } from "../notify/receiver.js";
import { simulatorHead } from "../helpers/simulator-config.js";

/**
 * Reminders (issue 31, item 3): a firing episode is sent again every `repeat_interval` until
 * it resolves, under the episode's id family with a repeat counter, through a restart on the
 * same store; resolved once. Against the simulator, on the daemon's injected clock (no wall
 * clock waits): a balance rule end to end to a signed webhook and a file, and kaiawatch's own
 * operational condition through its monitor.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAYER = "0x00000000000000000000000000000000000fee00";
const FUNDER = "0x00000000000000000000000000000000000f0f00";
const SECRET = `whsec_${Buffer.from("reminders-test-secret-0123456789").toString("base64")}`;
const pay = (from: string, to: string, kaia: string) => ({ internalTransactions: [{ from, to, amount: kaia, type: "CALL", transaction_status: { status: "Success" } }] });

describe("reminders of a balance episode", () => {
  it("re-sends a firing episode at each repeat_interval, across a restart, with its own webhook id and the same episode_id, and resolves it once", async () => {
    const sim = await createSimulator({ seed: 12, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    cleanups.push(() => sim.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    // From the wall clock's second: the webhook's signature carries the injected time, which a
    // Standard Webhooks verifier accepts within five minutes of its own.
    const base = Math.floor(Date.now() / 1000) * 1000;
    const iso = (seconds: number) => new Date(base + seconds * 1000).toISOString();
    let now = base;
    const text = `
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), requestsPerSecond: 100000 })}
defaults: { schedule: "0 0 0 1 1 *", jitter: 0s }
watches:
  - { name: payer, balance: ["${PAYER}"] }
rules:
  - { name: payer-low, watch: payer, notify: [out, hook], clear_after: 2, repeat_interval: 1m, when: { balance: { lt: "100 KAIA" } }, summary: "{{status}} {{repeat}}: {{balance}} {{symbol}}" }
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
  hook: { type: webhook, url: "${receiver.url}/hook", secret: "${SECRET}", allow_http: true }
`;
    const start = async (): Promise<Daemon> => {
      const daemon = await createDaemon(quietCommon({ now: () => now }), { config: configFromText(text) });
      cleanups.push(() => daemon.stop());
      return daemon;
    };
    const alerts = () => readJsonLines<AlertDocument>(join(dir.path, "alerts.jsonl"));
    const readingAt = async (daemon: Daemon, seconds: number) => {
      now = base + seconds * 1000;
      await daemon.runOnce({ drainTimeoutMs: 5000 });
    };

    sim.addBlock(pay(FUNDER, PAYER, "150"));
    let daemon = await start();
    sim.addBlock(pay(PAYER, FUNDER, "51")); // 99 KAIA: below
    await readingAt(daemon, 0); // fires
    await readingAt(daemon, 30); // half an interval: nothing
    await readingAt(daemon, 60); // reminder 1
    sim.addBlock(pay(PAYER, FUNDER, "1")); // 98 KAIA: still below, the reminder shows the reading of its moment
    await readingAt(daemon, 90);
    await daemon.stop();

    daemon = await start(); // the count and time are in the store
    await readingAt(daemon, 120); // reminder 2
    sim.addBlock(pay(FUNDER, PAYER, "2")); // 100 KAIA: no longer below
    await readingAt(daemon, 150); // one reading above (clear_after 2): still firing, no reminder
    await readingAt(daemon, 180); // a reminder would be due, but it resolves
    await readingAt(daemon, 240);
    await readingAt(daemon, 300);

    const sent = alerts();
    const [firing] = sent;
    expect(sent.map((a) => [a.id, a.status, a.repeat, a.episode_id, a.created_at, (a.record as { balance: string }).balance])).toEqual([
      [firing!.id, "firing", 0, firing!.id, iso(0), "99"],
      [`${firing!.id}:repeat:1`, "firing", 1, firing!.id, iso(60), "99"],
      [`${firing!.id}:repeat:2`, "firing", 2, firing!.id, iso(120), "98"],
      [`${firing!.id}:resolved`, "resolved", undefined, firing!.id, iso(180), "100"],
    ]);

    expect(sent.map((a) => a.summary)).toEqual(["firing 0: 99 KAIA", "firing 1: 99 KAIA", "firing 2: 98 KAIA", "resolved : 100 KAIA"]);

    // The webhook: signed, one webhook-id per alert (a Standard Webhooks receiver drops none), one episode_id, the counter in the body.
    const hooks = receiver.requests.filter((request) => request.url === "/hook");
    const verifier = new Webhook(SECRET);
    const bodies = hooks.map((hook) => verifier.verify(hook.body, hook.headers as Record<string, string>) as AlertDocument);
    expect(hooks.map((hook) => hook.headers["webhook-id"])).toEqual(sent.map((a) => a.id));
    expect(new Set(hooks.map((hook) => hook.headers["webhook-id"])).size).toBe(4);
    expect(bodies.map((body) => [body.episode_id, body.status, body.repeat])).toEqual([
      [firing!.id, "firing", 0],
      [firing!.id, "firing", 1],
      [firing!.id, "firing", 2],
      [firing!.id, "resolved", undefined],
    ]);
  });

  it("refuses repeat_interval on a rule that alerts once per record, with the key path", () => {
    const text = `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
watches:
  - { name: wallet, account: "${FUNDER}" }
rules:
  - { name: moves, watch: wallet, notify: [out], repeat_interval: 1h }
sinks:
  out: { type: console }
`;
    expect(() => configFromText(text)).toThrow(/rules\[0\]\.repeat_interval: rule "moves" alerts once per record.*repeat_interval applies to balance rules/);
  });
});

describe("reminders of kaiawatch's own conditions", () => {
  it("re-sends a condition still holding every operational.repeat_interval, across a restart, and resolves it once", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const common = quietCommon({ now: () => now });
    const path = join(dir.path, "store.json");
    const repeatInterval = repeatIntervalsOf({ rules: [], operational: { repeat_interval: 60_000 } as never });
    const condition = { key: "source_failing:src_1", kind: "source_failing", summary: "source src_1 is failing", detail: { source: "src_1" } };
    const monitorOn = async (store: Awaited<ReturnType<typeof openStore>>) => createOperationalMonitor(common, { store, sinks: ["ops"], network: "mainnet", head: () => 1000, onQueued: () => {}, repeatInterval });
    const at = (seconds: number) => (now = Date.parse("2026-01-01T00:00:00.000Z") + seconds * 1000);

    let store = await openStore(common, { path });
    let monitor = await monitorOn(store);
    for (const seconds of [0, 30, 60, 90]) {
      at(seconds);
      await monitor.update([condition]);
    }
    await store.close();
    store = await openStore(common, { path });
    cleanups.push(() => store.close());
    monitor = await monitorOn(store); // the restart queues the last reminder again: the outbox keeps one
    for (const seconds of [120, 150]) {
      at(seconds);
      await monitor.update([condition]);
    }
    at(160);
    await monitor.update([]);
    at(240);
    await monitor.update([]);

    const queued = (await store.listOutbox({ sink: "ops" })).map((entry) => entry.alert);
    const episode = queued[0]!.id;
    expect(queued.map((a) => [a.id, a.status, a.repeat, a.episode_id, a.datetime])).toEqual([
      [episode, "firing", 0, episode, "2026-01-01T00:00:00.000Z"],
      [`${episode}:repeat:1`, "firing", 1, episode, "2026-01-01T00:01:00.000Z"],
      [`${episode}:repeat:2`, "firing", 2, episode, "2026-01-01T00:02:00.000Z"],
      [`${episode}:resolved`, "resolved", undefined, episode, "2026-01-01T00:02:40.000Z"],
    ]);
  });
});
