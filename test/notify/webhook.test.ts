import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createTestCommon } from "../../src/common/common.js";
import { createWebhookSink, type WebhookOptions } from "../../src/notify/sinks/webhook.js";
import { createHttpSender } from "../../src/notify/http-sender.js";
import { SinkError } from "../../src/notify/sink.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { startReceiver, type Receiver } from "./receiver.js";
import { digest, nftAlert, single } from "./fixtures.js";
import { sendError } from "./send-error.js";

const SECRET = `whsec_${Buffer.from("a-test-secret-of-32-bytes-length").toString("base64")}`;
const signal = new AbortController().signal;

/** The options as the config gives them: what is not written here has the schema's default. */
function options(written: Partial<WebhookOptions> & { url: string }): WebhookOptions {
  return { headers: {}, timeout: 10_000, allow_http: false, ...written };
}
let receivers: Receiver[] = [];

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

describe("webhook sink", () => {
  it("signs with Standard Webhooks; the same webhook-id on every retry of a delivery", async () => {
    const r = await receiver((res, req) => {
      res.statusCode = r.requests.length === 1 ? 503 : 204;
      res.end();
      void req;
    });
    const common = createTestCommon();
    const sink = createWebhookSink(common, "audit", options({ url: r.url, secret: SECRET, allow_http: true, headers: { Authorization: "Bearer custom-token" } }));
    const delivery = single(nftAlert());
    const first = await sendError(() => sink.send(delivery, signal));
    expect(first.permanent).toBe(false);
    await sink.send({ ...delivery, attempt: 2 }, signal);

    expect(r.requests).toHaveLength(2);
    const verifier = new Webhook(SECRET);
    for (const req of r.requests) {
      const headers = { "webhook-id": String(req.headers["webhook-id"]), "webhook-timestamp": String(req.headers["webhook-timestamp"]), "webhook-signature": String(req.headers["webhook-signature"]) };
      expect(verifier.verify(req.body, headers)).toEqual(JSON.parse(JSON.stringify(delivery.alerts[0])));
      expect(req.headers["webhook-id"]).toBe(delivery.id);
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers.authorization).toBe("Bearer custom-token");
    }
    // A tampered body fails verification: the check above is not vacuous.
    const req = r.requests[1]!;
    expect(() => verifier.verify(req.body.replace("collection", "c0llection"), { "webhook-id": String(req.headers["webhook-id"]), "webhook-timestamp": String(req.headers["webhook-timestamp"]), "webhook-signature": String(req.headers["webhook-signature"]) })).toThrow();
    // The secret is registered for redaction from logs.
    expect(common.secrets.redact(`x ${SECRET} y`)).not.toContain(SECRET);
  });

  it("posts a digest document for several alerts", async () => {
    const r = await receiver();
    const sink = createWebhookSink(createTestCommon(), "audit", options({ url: r.url, allow_http: true }));
    const d = digest(3);
    await sink.send(d, signal);
    const body = JSON.parse(r.requests[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ version: 1, type: "digest", id: d.id, rule: d.rule, count: 3 });
    expect((body.alerts as { id: string }[]).map((a) => a.id)).toEqual(d.alerts.map((a) => a.id));
    expect(r.requests[0]!.headers["webhook-id"]).toBe(d.id);
    expect(r.requests[0]!.headers["webhook-signature"]).toBeUndefined();
  });

  it("does not follow redirects: a 3xx is a permanent error", async () => {
    const target = await receiver();
    const r = await receiver((res) => {
      res.writeHead(302, { location: `${target.url}/elsewhere` });
      res.end();
    });
    const sink = createWebhookSink(createTestCommon(), "audit", options({ url: `${r.url}/hook`, allow_http: true }));
    const error = await sendError(() => sink.send(single(), signal));
    expect(error.code).toBe("KW_NOTIFY_REDIRECT");
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("sink audit (webhook)");
    expect(target.requests).toHaveLength(0);
  });

  it("maps answers: 429 with Retry-After seconds or date, 408/5xx retryable, other 4xx permanent", async () => {
    const answers: [number, Record<string, string>][] = [
      [429, { "retry-after": "7" }],
      [429, { "retry-after": new Date(Date.now() + 60_000).toUTCString() }],
      [408, {}],
      [500, {}],
      [400, {}],
      [404, {}],
    ];
    let i = 0;
    const r = await receiver((res) => {
      const [status, headers] = answers[i++]!;
      res.writeHead(status, headers);
      res.end('{"error":"nope"}');
    });
    const sink = createWebhookSink(createTestCommon(), "audit", options({ url: r.url, allow_http: true }));
    const errors: SinkError[] = [];
    for (let n = 0; n < answers.length; n++) errors.push(await sendError(() => sink.send(single(), signal)));
    expect(errors.map((e) => e.permanent)).toEqual([false, false, false, false, true, true]);
    expect(errors[0]!.retryAfterMs).toBe(7000);
    // An HTTP date a minute ahead: between 0 and 60 s, with a generous margin for a slow machine.
    expect(errors[1]!.retryAfterMs).toBeGreaterThan(30_000);
    expect(errors[1]!.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(errors[4]!.message).toContain("HTTP 400");
    expect(errors[4]!.message).toContain("nope");
  });

  it("network failures and timeouts are retryable", async () => {
    const silent = await receiver(() => undefined); // never answers
    const sink = createWebhookSink(createTestCommon(), "audit", options({ url: silent.url, allow_http: true, timeout: 300 }));
    const timeout = await sendError(() => sink.send(single(), signal));
    expect(timeout.code).toBe("KW_NOTIFY_TIMEOUT");
    expect(timeout.permanent).toBe(false);

    const closed = await receiver();
    const url = closed.url;
    await closed.close();
    receivers = receivers.filter((x) => x !== closed);
    const refused = await sendError(() => createWebhookSink(createTestCommon(), "audit", options({ url, allow_http: true })).send(single(), signal));
    expect(refused.code).toBe("KW_NOTIFY_NETWORK");
    expect(refused.message).toContain("ECONNREFUSED");
    expect(refused.permanent).toBe(false);
  });

  it("stops at once when the shutdown signal fires, without a SinkError", async () => {
    const silent = await receiver(() => undefined);
    const sink = createWebhookSink(createTestCommon(), "audit", options({ url: silent.url, allow_http: true }));
    const controller = new AbortController();
    const sending = sink.send(single(), controller.signal);
    setTimeout(() => controller.abort(), 50);
    const error = await sending.then(() => undefined, (e: unknown) => e);
    expect(error).not.toBeInstanceOf(SinkError);
    expect((error as Error).name).toBe("AbortError");
  });

  it("refuses plain http unless allow_http, and bad secrets and headers, all at once", () => {
    expect(() => createWebhookSink(createTestCommon(), "audit", options({ url: "http://127.0.0.1:1/hook" }))).toThrow(SinkConfigError);
    let error: unknown;
    try {
      createWebhookSink(createTestCommon(), "audit", options({ url: "http://example.com/hook", secret: "whsec_!!!", headers: { "webhook-id": "x", "Bad Header": "y", "X-Ok": "a\r\nb" } }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SinkConfigError);
    const problems = (error as SinkConfigError).problems.map((p) => p.key);
    expect(problems).toEqual(["url", "secret", "headers.webhook-id", "headers.Bad Header", "headers.X-Ok"]);
    expect((error as SinkConfigError).code).toBe("KW_NOTIFY_CONFIG");
    expect(() => createWebhookSink(createTestCommon(), "audit", options({ url: "http://127.0.0.1:1/hook", allow_http: true }))).not.toThrow();
  });
});

describe("http sender", () => {
  it("reads Retry-After from a Discord or Telegram body when the header is missing", async () => {
    const r = await receiver((res) => {
      res.writeHead(429, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false, error_code: 429, parameters: { retry_after: 3 } }));
    });
    const error = await sendError(() => createHttpSender(createTestCommon()).postJson({ url: r.url, body: "{}", timeoutMs: 5000, target: "sink t (telegram)" }, signal).then(() => undefined));
    expect(error.retryAfterMs).toBe(3000);
    expect(error.permanent).toBe(false);
  });
});
