import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { SMTPServer } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { SinkError, type Delivery, type Sink } from "../../src/notify/sink.js";
import { SINK_DEFINITIONS, SINK_TYPES, sinkConfigSchema, sinkDefinitionOf } from "../../src/notify/sinks/index.js";
import { digest, nftAlert, single } from "./fixtures.js";
import { startReceiver, type Receiver } from "./receiver.js";

/**
 * The sink contract (issue 39, item 4), every case run against every sink definition in the
 * registry (SINK_DEFINITIONS), built the way the daemon builds it (the entry parsed by the
 * config schema, then the definition's `create`): an accepted send resolves, with the HTTP
 * status as its receipt where the channel is HTTP; a 4xx other than 408/429 is a permanent
 * SinkError; a 429 with Retry-After is a retryable one carrying the wait; no error carries a
 * secret of the sink's options, even when the receiver quotes the request back; the preview is
 * a function of the delivery and the options alone. What one sink alone does (escaping, limits,
 * signing) is tested beside it.
 */
interface Subject {
  type: string;
  /** The HTTP sinks answer the status cases; console and file have no receiver, email speaks SMTP (its own cases below). */
  channel: "http" | "smtp" | "local";
  /** The entry under `sinks.NAME`, pointed at `base` (the receiver's origin, or the SMTP port's). */
  entry(base: string): Record<string, unknown>;
}

const TOKEN = "123456789:AAsecretTelegramToken_abcdef";
const ROUTING_KEY = "R0UTINGKEYsecret0123456789abcdef";
const HOOK_SECRET = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LTAxMjM0NTY3";
const HEADER_SECRET = "Bearer header-secret-0a1b2c3d4e5f";
const SMTP_PASS = "smtp-pass-secret-9z8y7x";

let files: string;
let fileCount = 0;
beforeAll(() => {
  files = mkdtempSync(join(tmpdir(), "kw-sink-contract-"));
});
afterAll(() => rmSync(files, { recursive: true, force: true }));

const subjects: Subject[] = [
  { type: "slack", channel: "http", entry: (base) => ({ url: `${base}/services/T000/B000/slackPathSecret0123` }) },
  { type: "discord", channel: "http", entry: (base) => ({ url: `${base}/api/webhooks/123/discordPathSecret0123` }) },
  { type: "telegram", channel: "http", entry: (base) => ({ bot_token: TOKEN, chat_id: "-1001234567890", api_url: base }) },
  { type: "email", channel: "smtp", entry: (port) => ({ smtp: { host: "127.0.0.1", port: Number(port), starttls: false, user: "kw-smtp-user-0123", pass: SMTP_PASS, timeout: "5s" }, from: "kaiawatch <alerts@example.com>", to: ["ops@example.com"] }) },
  { type: "webhook", channel: "http", entry: (base) => ({ url: `${base}/hooks/kaia?token=queryTokenSecret0123`, allow_http: true, secret: HOOK_SECRET, headers: { authorization: HEADER_SECRET } }) },
  { type: "pagerduty", channel: "http", entry: (base) => ({ routing_key: ROUTING_KEY, url: `${base}/v2/enqueue` }) },
  { type: "teams", channel: "http", entry: (base) => ({ url: `${base}/workflows/teamsSig0123456789/triggers/manual?sig=teamsQuerySecret0123` }) },
  { type: "console", channel: "local", entry: () => ({}) },
  { type: "file", channel: "local", entry: () => ({ path: join(files, `alerts-${++fileCount}.jsonl`) }) },
  { type: "heartbeat", channel: "http", entry: (base) => ({ url: `${base}/ping/heartbeatPathSecret0123`, allow_http: true, headers: { "x-api-key": HEADER_SECRET } }) },
];

it("covers every sink definition of the registry", () => {
  expect(subjects.map((subject) => subject.type)).toEqual([...SINK_TYPES]);
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The sink as the daemon builds it: the entry through the config schema (defaults applied), then its definition's factory. */
function build(subject: Subject, base: string): { sink: Sink; secrets: string[]; options: never } {
  const options = sinkConfigSchema.parse({ type: subject.type, ...subject.entry(base) }) as never;
  const definition = sinkDefinitionOf(subject.type)!;
  const sink = definition.create(createTestCommon(), "contract", options);
  cleanups.push(async () => sink.close?.());
  return { sink, secrets: definition.secrets(options), options };
}

/** A receiver that answers every request with `status` (and `headers`), quoting the request back: URL, header values, body. */
async function answering(status: number, headers: Record<string, string> = {}): Promise<Receiver> {
  const receiver = await startReceiver((res, req) => {
    res.writeHead(status, { "content-type": "text/plain", ...headers });
    res.end(`${req.url} ${Object.values(req.headers).join(" ")} ${req.body.slice(0, 120)}`);
  });
  cleanups.push(() => receiver.close());
  return receiver;
}

async function failure(send: Promise<unknown>): Promise<SinkError> {
  const outcome = await send.then(
    () => new Error("the send succeeded"),
    (error: unknown) => error,
  );
  if (!(outcome instanceof SinkError)) throw outcome;
  return outcome;
}

function expectNoSecret(error: SinkError, secrets: readonly string[]): void {
  expect(secrets.length).toBeGreaterThan(0);
  const said = [error.message, error.details ?? "", String(error.cause ?? "")].join("\n");
  for (const secret of secrets) expect(said).not.toContain(secret);
}

const signal = new AbortController().signal;

describe.each(subjects.filter((subject) => subject.channel === "http"))("the $type sink over HTTP", (subject) => {
  it("takes a 2xx as accepted, with the status as its receipt", async () => {
    const receiver = await answering(202);
    const { sink } = build(subject, receiver.url);
    await expect(sink.send(single(nftAlert()), signal)).resolves.toEqual({ status: 202 });
    expect(receiver.requests.length).toBeGreaterThan(0);
  });

  for (const status of [400, 401, 403, 404, 410, 422]) {
    it(`takes a ${status} as permanent, naming the status and no secret`, async () => {
      const receiver = await answering(status);
      const { sink, secrets } = build(subject, receiver.url);
      const error = await failure(sink.send(single(nftAlert()), signal));
      expect(error).toMatchObject({ permanent: true, status });
      expect(error.message).toContain(`HTTP ${status}`);
      expectNoSecret(error, secrets);
    });
  }

  it("takes a 429 with Retry-After as retryable after that wait, and a 5xx as retryable, with no secret", async () => {
    const limited = await answering(429, { "retry-after": "7" });
    const { sink, secrets } = build(subject, limited.url);
    const error = await failure(sink.send(single(nftAlert()), signal));
    expect(error).toMatchObject({ permanent: false, status: 429, retryAfterMs: 7000 });
    expectNoSecret(error, secrets);

    const down = await answering(503);
    const again = build(subject, down.url);
    const outage = await failure(again.sink.send(single(nftAlert()), signal));
    expect(outage).toMatchObject({ permanent: false, status: 503 });
    expectNoSecret(outage, again.secrets);
  });

  it("names no secret when nothing answers", async () => {
    const gone = await answering(200);
    await gone.close();
    const { sink, secrets } = build(subject, gone.url);
    const error = await failure(sink.send(single(nftAlert()), signal));
    expect(error.permanent).toBe(false);
    expectNoSecret(error, secrets);
  });
});

describe("the email sink over SMTP", () => {
  const subject = subjects.find((s) => s.type === "email")!;

  async function smtp(reject?: { code: number; message: string }): Promise<number> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => {
          if (reject === undefined) return callback();
          const error = Object.assign(new Error(`${reject.message} (quoting ${SMTP_PASS})`), { responseCode: reject.code });
          callback(error);
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return (server.server.address() as AddressInfo).port;
  }

  it("takes 250 as accepted", async () => {
    const { sink } = build(subject, String(await smtp()));
    await expect(sink.send(single(nftAlert()), signal)).resolves.toBeUndefined();
  });

  it("takes a 5xx as permanent and a 4xx as retryable, with no secret", async () => {
    const refused = build(subject, String(await smtp({ code: 550, message: "mailbox unavailable" })));
    const permanent = await failure(refused.sink.send(single(nftAlert()), signal));
    expect(permanent.permanent).toBe(true);
    expectNoSecret(permanent, refused.secrets);

    const busy = build(subject, String(await smtp({ code: 451, message: "try again later" })));
    const transient = await failure(busy.sink.send(single(nftAlert()), signal));
    expect(transient.permanent).toBe(false);
    expectNoSecret(transient, busy.secrets);
  });
});

describe.each(subjects.filter((subject) => subject.channel === "local"))("the $type sink", (subject) => {
  it("takes a delivery without a receiver", async () => {
    const { sink } = build(subject, "");
    await expect(sink.send(single(nftAlert()), signal)).resolves.not.toBeInstanceOf(Error);
  });
});

describe.each(subjects)("the $type sink's preview", (subject) => {
  /** One delivery and its deep copy: the preview may read nothing but what they hold in common. */
  function twins(delivery: Delivery): [Delivery, Delivery] {
    return [delivery, structuredClone(delivery)];
  }

  it("is the same for the same delivery and options, single or digest, and carries no secret", () => {
    const definition = sinkDefinitionOf(subject.type)!;
    const entry = subject.entry(subject.channel === "smtp" ? "2525" : "http://127.0.0.1:9");
    const options = sinkConfigSchema.parse({ type: subject.type, ...entry }) as never;
    const secrets = definition.secrets(options);
    for (const [a, b] of [twins(single(nftAlert())), twins(digest(3))]) {
      const first = definition.preview(a, options);
      expect(typeof first).toBe("string");
      expect(definition.preview(a, options)).toBe(first);
      expect(definition.preview(b, options)).toBe(first);
      for (const secret of secrets) expect(first).not.toContain(secret);
    }
  });
});

it("lists each definition once", () => {
  expect(new Set(SINK_DEFINITIONS).size).toBe(SINK_DEFINITIONS.length);
});
