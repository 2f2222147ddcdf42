import { afterEach, describe, expect, it } from "vitest";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";
import { createTestCommon } from "../../src/common/common.js";
import { createEmailSink, type EmailOptions } from "../../src/notify/sinks/email.js";
import { SinkError, type Sink } from "../../src/notify/sink.js";
import { SinkConfigError } from "../../src/notify/errors.js";
import { CONTRACT, HOSTILE, HOSTILE_NAME, INVISIBLE_OR_BIDI, digest, nftAlert, single } from "./fixtures.js";

const signal = new AbortController().signal;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Smtp {
  port: number;
  mails: ParsedMail[];
  envelopes: string[][];
}

/** A real SMTP server on 127.0.0.1 that parses what it receives with mailparser. */
async function startSmtp(options: Partial<SMTPServerOptions> = {}): Promise<Smtp> {
  const smtp: Smtp = { port: 0, mails: [], envelopes: [] };
  const server = new SMTPServer({
    disabledCommands: options.onAuth === undefined ? ["STARTTLS", "AUTH"] : ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: options.onAuth === undefined,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          smtp.mails.push(mail);
          smtp.envelopes.push(session.envelope.rcptTo.map((r) => r.address));
          callback();
        })
        .catch(callback);
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  smtp.port = (server.server.address() as AddressInfo).port;
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return smtp;
}

function sink(port: number, extra: Partial<EmailOptions> = {}, smtp: Partial<EmailOptions["smtp"]> = {}): Sink {
  const s = createEmailSink(createTestCommon(), "ops-email", {
    smtp: { host: "127.0.0.1", port, secure: false, starttls: false, timeout: 5000, ...smtp },
    from: "kaiawatch <alerts@example.com>",
    to: ["ops@example.com"],
    cc: ["audit@example.com"],
    ...extra,
  });
  cleanups.push(async () => s.close?.());
  return s;
}

function smtpReject(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

async function sendError(s: Sink): Promise<SinkError> {
  const error = await s.send(single(), signal).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(SinkError);
  return error as SinkError;
}

describe("email sink", () => {
  it("sends text and HTML parts with hostile names escaped and a Message-ID derived from the delivery", async () => {
    const smtp = await startSmtp();
    const s = sink(smtp.port);
    const delivery = single(nftAlert({ summary: `Transfer of ${HOSTILE_NAME}` }, `${HOSTILE_NAME}${HOSTILE.huge}`));
    await s.send(delivery, signal);
    await s.send({ ...delivery, attempt: 2 }, signal);

    expect(smtp.mails).toHaveLength(2);
    const mail = smtp.mails[0]!;
    expect(mail.messageId).toBe(`<${delivery.id}@kaiawatch>`);
    expect(smtp.mails[1]!.messageId).toBe(mail.messageId);
    expect(mail.from?.text).toContain("alerts@example.com");
    expect(smtp.envelopes[0]).toEqual(["ops@example.com", "audit@example.com"]);

    // The subject is one sanitized line; CR/LF in a name injected no header.
    expect(mail.subject).toMatch(/^\[kaiawatch\] collection-feed: Transfer of /);
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.subject).not.toMatch(INVISIBLE_OR_BIDI);
    expect([...mail.subject!].length).toBeLessThanOrEqual(200);
    expect(mail.headers.has("x-evil")).toBe(false);
    expect(mail.bcc).toBeUndefined();

    const html = String(mail.html);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("invoice&lt;U+202E&gt;gpj.exe");
    expect(html).not.toMatch(INVISIBLE_OR_BIDI);
    expect(html).toContain(`href="https://kaiascan.io/tx/0x${"ab".repeat(32)}"`);
    expect(html.length).toBeLessThan(20_000);

    const text = mail.text!;
    expect(text).toContain("<!channel>");
    expect(text).not.toMatch(INVISIBLE_OR_BIDI);
    expect(text).toMatch(new RegExp(`token: .*${CONTRACT}`));
  });

  it("renders operator templates for subject and body", async () => {
    const smtp = await startSmtp();
    const s = sink(smtp.port, { subject: "{{count}} × {{rule}} {{enrichment.token.name}}", body: "<p>Hello</p>\n{{#alerts}}- {{summary}}\n{{/alerts}}" });
    await s.send(single(nftAlert({ summary: HOSTILE.script }, HOSTILE.crlf)), signal);
    const mail = smtp.mails[0]!;
    expect(mail.subject).toBe("1 × collection-feed line1 Bcc: victim@example.com X-Evil: 1");
    expect(String(mail.html)).toContain("<p>Hello</p>");
    expect(String(mail.html)).toContain("- &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(mail.text).toContain("- <script>alert(1)</script>");
  });

  it("sends a digest listing the alerts", async () => {
    const smtp = await startSmtp();
    await sink(smtp.port).send(digest(150, "Kitty"), signal);
    const mail = smtp.mails[0]!;
    expect(mail.subject).toBe(`[kaiawatch] 150 NFT transfers for rule collection-feed of collection ${CONTRACT}; first 100 shown`);
    expect(String(mail.html).match(/<li>/g)).toHaveLength(100);
  });

  it("authenticates, and a wrong password is a permanent error", async () => {
    const smtp = await startSmtp({
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _session, callback) {
        if (auth.username === "kw" && auth.password === "right-password") callback(null, { user: "kw" });
        else callback(new Error("Invalid username or password"));
      },
    });
    await sink(smtp.port, {}, { user: "kw", pass: "right-password" }).send(single(), signal);
    expect(smtp.mails).toHaveLength(1);
    const error = await sendError(sink(smtp.port, {}, { user: "kw", pass: "wrong-password" }));
    expect(error.code).toBe("KW_NOTIFY_SMTP_AUTH");
    expect(error.permanent).toBe(true);
    expect(error.message).not.toContain("wrong-password");
  });

  it("451 is retryable, 550 is permanent", async () => {
    const busy = await startSmtp({ onRcptTo: (_a, _s, cb) => cb(smtpReject(451, "Try again later")) });
    const retry = await sendError(sink(busy.port));
    expect(retry.permanent).toBe(false);
    expect(retry.message).toContain("451");

    const reject = await startSmtp({ onData: (stream, _s, cb) => stream.on("end", () => cb(smtpReject(550, "Message rejected as spam"))).resume() });
    const permanent = await sendError(sink(reject.port));
    expect(permanent.permanent).toBe(true);
    expect(permanent.message).toContain("550");
  });

  it("a server without STARTTLS, with starttls on (the default), gets the hint to set starttls: false", async () => {
    const smtp = await startSmtp();
    const error = await sendError(sink(smtp.port, {}, { starttls: true }));
    expect(error.permanent).toBe(true);
    expect(error.message).toContain("set starttls: false on the sink");
    expect(smtp.mails).toHaveLength(0);
  });

  it("a server that is not there is retryable", async () => {
    const smtp = await startSmtp();
    const port = smtp.port;
    await cleanups.pop()!();
    const error = await sendError(sink(port));
    expect(error.permanent).toBe(false);
    expect(error.code).toBe("KW_NOTIFY_SMTP_NETWORK");
  });

  it("reports every config problem at once", () => {
    let error: unknown;
    try {
      createEmailSink(createTestCommon(), "e", { smtp: { host: "", port: 70000, secure: true, starttls: true, user: "u", timeout: 30_000 }, from: "", to: [], cc: [], subject: "{{#x}}" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SinkConfigError);
    expect((error as SinkConfigError).problems.map((p) => p.key)).toEqual(["smtp.host", "smtp.port", "smtp.starttls", "smtp.pass", "from", "to", "subject"]);
  });
});
