import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedStore } from "../../bench/store-seed.js";
import { createTestCommon } from "../../src/common/common.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { openStore } from "../../src/store/open-store.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { recordKeyOf, tempDir } from "../helpers/harness.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { faultMoment } from "../helpers/wait-for.js";
import { startReceiver, type Receiver } from "./receiver.js";

/**
 * Guarantee 3 across SIGKILL: `kaiawatch run` (a real child process) delivers to a slow
 * webhook receiver in this process and is killed with SIGKILL while deliveries are in
 * flight, again and again; `kaiawatch once` then finishes. The receiver must have got every
 * alert at least once, and anything it got twice under the same webhook-id and alert id.
 * The store holds 100,000 delivered alerts before the first run (a week of a busy feed), so
 * that the kills land on commits into a full store, not an empty one.
 */
const KILLS = 4;
const SEEDED = 100_000;
const REPLY_DELAY_MS = 150;
let sim: Simulator;
let receiver: Receiver;
let inFlight = 0;
const dir = tempDir("kaiawatch-e2e-sigkill-");

beforeAll(async () => {
  sim = await createSimulator({ seed: 31, initialBlocks: 40 });
  receiver = await startReceiver((res) => {
    // Slow, so that a kill finds requests the receiver has but the daemon has no answer to.
    inFlight += 1;
    setTimeout(() => {
      inFlight -= 1;
      if (!res.destroyed) res.writeHead(204).end();
    }, REPLY_DELAY_MS);
  });
});
afterAll(async () => {
  await receiver?.close();
  await sim?.close();
  dir.remove();
});

describe("SIGKILL while deliveries are in flight", () => {
  it(`delivers every alert at least once, a repeat only under the same id, over ${KILLS} kills and a restart`, async () => {
    const start = sim.head() - 39;
    const configPath = join(dir.path, "config.yaml");
    const storePath = join(dir.path, "store.json");
    await seedStore(storePath, { delivered: SEEDED, sinks: ["audit"] });
    writeFileSync(
      configPath,
      `
explorer: { base_url: "${sim.url}", requests_per_second: 500, page_size: 50 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${storePath}" }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: ${start}, max_window_blocks: 10, jitter: 0s }
watches:
  - { name: kitties, collection: "${sim.addresses.busyCollection}" }
rules:
  - { name: transfers, watch: kitties, notify: [audit] }
sinks:
  audit: { type: webhook, url: "${receiver.url}/hook", allow_http: true, concurrency: 2 }
`,
    );
    let kills = 0;
    for (let run = 0; run < KILLS; run++) {
      const child = startKaiawatch(["run", "--config", configPath, "--log-level", "warn", "--log-format", "json"]);
      const before = receiver.requests.length;
      // Kill while the receiver holds a request it has not answered, at a varying moment.
      await waitFor(() => inFlight > 0 && receiver.requests.length > before, 20_000, `run ${run} to deliver`);
      await faultMoment((run * 37) % REPLY_DELAY_MS);
      child.process.kill("SIGKILL");
      const { signal } = await child.exited;
      expect(signal, child.stderr()).toBe("SIGKILL");
      kills += 1;
    }
    expect(kills).toBe(KILLS);

    const finish = startKaiawatch(["once", "--config", configPath, "--drain-timeout", "5m", "--log-level", "warn", "--log-format", "json"]);
    const { code } = await finish.exited;
    expect(code, finish.stderr()).toBe(0);
    expect(finish.stdout()).toContain("still pending 0");
    const head = Number(/^head (\d+)/m.exec(finish.stdout())?.[1]);
    expect(head).toBe(sim.head());

    const truth = sim.truth.nftTransfers(sim.addresses.busyCollection, { from: start, to: head }).map((r) => NORMALIZERS.nft_transfers(r).key);
    expect(truth.length).toBeGreaterThan(50);
    const idsByRecord = new Map<string, Set<string>>();
    for (const request of receiver.requests) {
      const alert = JSON.parse(request.body) as AlertDocument;
      expect(request.headers["webhook-id"]).toBe(alert.id);
      const key = recordKeyOf(alert);
      const ids = idsByRecord.get(key) ?? new Set<string>();
      ids.add(alert.id);
      idsByRecord.set(key, ids);
    }
    expect(truth.filter((key) => !idsByRecord.has(key))).toEqual([]);
    expect(idsByRecord.size).toBe(truth.length);
    expect([...idsByRecord.entries()].filter(([, ids]) => ids.size > 1)).toEqual([]);
    // The history is still there, and the alerts of this run beside it, each once.
    const store = await openStore(createTestCommon(), { path: storePath, readOnly: true });
    expect((await store.countOutbox({ state: "delivered" }))).toBe(SEEDED + truth.length);
    expect((await store.countOutbox({ state: "pending" }))).toBe(0);
    await store.close();
    const repeats = receiver.requests.length - truth.length;
    console.log(`sigkill e2e: ${KILLS} kills, ${truth.length} alerts, ${receiver.requests.length} requests, ${repeats} repeated under their own id`);
  }, 120_000);
});
