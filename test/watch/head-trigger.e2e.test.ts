import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { seededRandom } from "../../bench/support.js";
import { waitFor } from "../helpers/child.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { simulatorHead } from "../helpers/simulator-config.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The head read of `schedule: head` sources, stepped by the test instead of a timer: each
 * step is one read of the head, so what a read finds (no new block, one, several) is the
 * test's choice, and nothing depends on how fast the machine is.
 */
function headSteps(): { wait: (signal: AbortSignal) => Promise<void>; step: () => Promise<void>; reads: () => number } {
  let release: (() => void) | undefined;
  let reads = 0;
  return {
    wait: (signal) =>
      new Promise<void>((resolve, reject) => {
        reads += 1;
        const onAbort = () => reject(signal.reason as Error);
        signal.addEventListener("abort", onAbort, { once: true });
        release = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
      }),
    async step() {
      // The loop is waiting for its next read once it has asked for the wait.
      const before = reads;
      while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
      const go = release;
      release = undefined;
      go();
      while (reads === before) await new Promise((resolve) => setImmediate(resolve));
    },
    reads: () => reads,
  };
}

describe("schedule: head", () => {
  it("with blocks at irregular intervals, delivers every alert once, each before the next block comes, asking the explorer once per head that moved", async () => {
    const sim = await createSimulator({ seed: 32, initialBlocks: 5, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
    const dir = tempDir();
    cleanups.push(() => sim.close(), () => dir.remove());
    const received = new Map<string, number>();
    const blocksReceived = new Set<number>();
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const alert = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; block: number };
        received.set(alert.id, (received.get(alert.id) ?? 0) + 1);
        blocksReceived.add(alert.block);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const config = configFromText(`
${simulatorHead(sim, { storePath: join(dir.path, "store.json") })}
defaults: { schedule: head, start: latest, jitter: 0s }
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
rules: [ { name: transfers, watch: token, when: { event: Transfer }, notify: [hook] } ]
sinks: { hook: { type: webhook, url: "${url}", allow_http: true } }
`);
    const steps = headSteps();
    const daemon = await createDaemon(quietCommon(), { config, waitForHead: steps.wait });
    cleanups.push(() => daemon.stop());
    await daemon.start();
    const cursor = () => daemon.engine.states()[0]!.cursor;
    // The first read, at start: the cursor set at the head (start: latest), no request.
    await waitFor(() => cursor() === sim.head(), 10_000, "the cursor at the head");
    const requests = () => Object.entries(sim.stats().requests).filter(([op]) => op !== "rpc").reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);

    const random = seededRandom(0x32);
    const withRecords: number[] = [];
    let headMoves = 0;
    for (let read = 0; read < 40; read++) {
      // Irregular: most reads find nothing new; some one block, some several (a block with
      // two transfers, one with none).
      const draw = random();
      const newBlocks = draw < 0.5 ? 0 : draw < 0.8 ? 1 : 2 + Math.floor(random() * 3);
      for (let b = 0; b < newBlocks; b++) {
        const logs = random() < 0.2 ? [] : random() < 0.3 ? [{}, {}] : [{}];
        const block = sim.addBlock({ eventLogs: logs });
        if (logs.length > 0) withRecords.push(block);
      }
      const requestsBefore = requests();
      await steps.step();
      if (newBlocks === 0) {
        // A head that did not move costs nothing at the explorer.
        expect(requests()).toBe(requestsBefore);
        continue;
      }
      headMoves += 1;
      const head = sim.head();
      // Every alert up to this head arrives before the next block is made: within one block.
      await waitFor(() => cursor() === head && withRecords.every((b) => blocksReceived.has(b)), 10_000, `every alert up to block ${head}`);
      expect(requests()).toBe(requestsBefore + 1);
    }
    expect(headMoves).toBeGreaterThan(5);
    expect(withRecords.length).toBeGreaterThan(5);
    // Once each: as many deliveries as Transfers, no id twice.
    await daemon.stop();
    const transfers = sim.truth.accountEventLogs(sim.addresses.busyToken, { from: withRecords[0]!, to: sim.head() });
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    expect(received.size).toBe(transfers.length);
    expect(sim.stats().requests.accountEventLogs?.["200"]).toBe(headMoves);
  }, 60_000);
});
