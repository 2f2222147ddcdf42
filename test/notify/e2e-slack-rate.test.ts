import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DrainResult } from "../../src/notify/dispatcher.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { configFromText, tempDir } from "../helpers/harness.js";
import { withDaemon } from "../helpers/with-daemon.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { addNftTransfers, emptyChain, nftTransfersTo } from "./e2e-support.js";

/**
 * Slack's rule, played by a real receiver: more than one message a second on a webhook is
 * answered 429 with Retry-After. One sink keeps Slack's default pace (1/s); another is set
 * to send 4 a second and must be held back by the receiver's Retry-After alone. Nothing is
 * lost, nothing arrives twice, and after a 429 the sink waits as long as it was told.
 */
const ALERTS = 6;
const MIN_SPACING_MS = 1000;

interface Arrival {
  at: number;
  status: number;
  text: string;
}

let sim: Simulator;
let receiver: Receiver;
const dir = tempDir("kaiawatch-e2e-slack-");
const arrivals = new Map<string, Arrival[]>();
let delivery: DrainResult;
let entries: OutboxEntry[] = [];

beforeAll(async () => {
  sim = await emptyChain(12);
  const block = addNftTransfers(sim, ALERTS);
  const lastAccepted = new Map<string, number>();
  receiver = await startReceiver((res, req) => {
    const at = performance.now();
    const hook = req.url;
    const list = arrivals.get(hook) ?? [];
    arrivals.set(hook, list);
    const text = (JSON.parse(req.body) as { text: string }).text;
    if (at - (lastAccepted.get(hook) ?? -Infinity) < MIN_SPACING_MS) {
      list.push({ at, status: 429, text });
      res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" }).end("rate_limited");
      return;
    }
    lastAccepted.set(hook, at);
    list.push({ at, status: 200, text });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  const text = `
${nftTransfersTo(sim, { dir: dir.path, start: block, notify: ["paced", "eager"] })}
sinks:
  paced: { type: slack, url: "${receiver.url}/services/T1/B1/paced", text: "{{id}}" }
  eager: { type: slack, url: "${receiver.url}/services/T1/B2/eager", text: "{{id}}", rate_per_second: 4 }
`;
  await withDaemon({ config: configFromText(text) }, async (daemon) => {
    delivery = (await daemon.runOnce({ drainTimeoutMs: 28_000 })).delivery;
    entries = await daemon.store.listOutbox();
  });
}, 30_000);

afterAll(async () => {
  await receiver?.close();
  await sim?.close();
  dir.remove();
});

describe("a Slack-like receiver that allows one message a second", () => {
  it("loses nothing and accepts each alert once, on both sinks", () => {
    expect(delivery).toMatchObject({ delivered: 2 * ALERTS, dead: 0, pending: 0, timedOut: false });
    const alertIds = [...new Set(entries.map((e) => e.alert.id))].sort();
    expect(alertIds).toHaveLength(ALERTS);
    for (const hook of ["/services/T1/B1/paced", "/services/T1/B2/eager"]) {
      const accepted = (arrivals.get(hook) ?? []).filter((a) => a.status === 200).map((a) => a.text);
      expect(accepted.sort(), hook).toEqual(alertIds);
    }
    expect(entries.every((e) => e.state === "delivered")).toBe(true);
  });

  it("keeps at least a second between accepted messages of a webhook", () => {
    for (const list of arrivals.values()) {
      const accepted = list.filter((a) => a.status === 200);
      for (let i = 1; i < accepted.length; i++) expect(accepted[i]!.at - accepted[i - 1]!.at).toBeGreaterThanOrEqual(MIN_SPACING_MS);
    }
  });

  it("after a 429, sends nothing more to that webhook until Retry-After has passed", () => {
    const eager = arrivals.get("/services/T1/B2/eager") ?? [];
    const limited = eager.filter((a) => a.status === 429);
    // The sink was set to send faster than the receiver allows: it must have been told to wait.
    expect(limited.length).toBeGreaterThan(0);
    for (let i = 1; i < eager.length; i++) {
      if (eager[i - 1]!.status === 429) expect(eager[i]!.at - eager[i - 1]!.at).toBeGreaterThanOrEqual(990);
    }
    // A rejected message is retried under the same text (its alert id) until accepted.
    for (const rejected of limited) expect(eager.some((a) => a.status === 200 && a.text === rejected.text)).toBe(true);
  });
});
