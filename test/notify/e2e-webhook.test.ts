import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import type { AlertDocument } from "../../src/model/alert-document.js";
import type { Simulator } from "../../src/simulator/index.js";
import { configFromText, tempDir } from "../helpers/harness.js";
import { withDaemon } from "../helpers/with-daemon.js";
import { startReceiver, type Received, type Receiver } from "./receiver.js";
import { WEBHOOK_SECRET, addNftTransfers, emptyChain, nftTransfersTo } from "./e2e-support.js";

/**
 * Signed webhooks end to end: a receiver that fails the first attempts of every delivery
 * (503, then 429 with Retry-After) sees, on every attempt, the same `webhook-id` and body,
 * each signed so that the independent `standardwebhooks` package verifies it.
 */
const FAILURES_BEFORE_SUCCESS = 2;
let sim: Simulator;
let receiver: Receiver;
const dir = tempDir("kaiawatch-e2e-webhook-");
let entries: { id: string; state: string; attempts: number; alert: AlertDocument }[] = [];

beforeAll(async () => {
  sim = await emptyChain(11);
  const block = addNftTransfers(sim, 4);
  const seen = new Map<string, number>();
  receiver = await startReceiver((res, req) => {
    const id = String(req.headers["webhook-id"]);
    const attempt = (seen.get(id) ?? 0) + 1;
    seen.set(id, attempt);
    if (attempt === 1) {
      res.writeHead(503).end("down for maintenance");
    } else if (attempt <= FAILURES_BEFORE_SUCCESS) {
      res.writeHead(429, { "retry-after": "1" }).end("slow down");
    } else {
      res.writeHead(204).end();
    }
  });
  const text = `
${nftTransfersTo(sim, { dir: dir.path, start: block, notify: ["audit"] })}
sinks:
  audit: { type: webhook, url: "${receiver.url}/hooks/kaia", allow_http: true, secret: "${WEBHOOK_SECRET}", headers: { X-Team: treasury } }
`;
  await withDaemon({ config: configFromText(text) }, async (daemon) => {
    const { delivery } = await daemon.runOnce({ drainTimeoutMs: 25_000 });
    expect(delivery).toMatchObject({ delivered: 4, pending: 0, dead: 0 });
    entries = await daemon.store.listOutbox({ sink: "audit" });
  });
}, 30_000);

afterAll(async () => {
  await receiver?.close();
  await sim?.close();
  dir.remove();
});

function signatureHeaders(request: Received): Record<string, string> {
  return {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
}

describe("signed webhooks through retries", () => {
  it("every attempt verifies with the standardwebhooks package, and a changed body does not", () => {
    const verifier = new Webhook(WEBHOOK_SECRET);
    expect(receiver.requests).toHaveLength(4 * (FAILURES_BEFORE_SUCCESS + 1));
    for (const request of receiver.requests) {
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["x-team"]).toBe("treasury");
      const document = verifier.verify(request.body, signatureHeaders(request)) as AlertDocument;
      expect(document.id).toBe(request.headers["webhook-id"]);
      expect(() => verifier.verify(request.body.replace('"transfers"', '"transferz"'), signatureHeaders(request))).toThrow();
    }
    expect(() => new Webhook(`whsec_${Buffer.from("another secret entirely!").toString("base64")}`).verify(receiver.requests[0]!.body, signatureHeaders(receiver.requests[0]!))).toThrow();
  });

  it("carries the same webhook-id and body on every retry of an alert, and delivers each alert once", () => {
    expect(entries).toHaveLength(4);
    for (const entry of entries) {
      expect(entry).toMatchObject({ state: "delivered", attempts: FAILURES_BEFORE_SUCCESS + 1 });
      const attempts = receiver.requests.filter((r) => r.headers["webhook-id"] === entry.alert.id);
      expect(attempts).toHaveLength(FAILURES_BEFORE_SUCCESS + 1);
      expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
      expect((JSON.parse(attempts[0]!.body) as AlertDocument).id).toBe(entry.alert.id);
      // Timestamps are fresh for each attempt (a receiver's tolerance window applies to the attempt, not the first try).
      const times = attempts.map((r) => Number(r.headers["webhook-timestamp"]));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    }
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size).toBe(4);
  });
});
