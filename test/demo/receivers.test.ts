import { randomBytes } from "node:crypto";
import nodemailer from "nodemailer";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { decodeMimeWords, startSmtpCatcher, type MailReceipt } from "../../src/demo/smtp-catcher.js";
import { startWebhookReceiver, type WebhookReceipt } from "../../src/demo/webhook-receiver.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

async function receiver(secret: string) {
  const receipts: WebhookReceipt[] = [];
  const r = await startWebhookReceiver({ secret, onDelivery: (x) => receipts.push(x) });
  cleanups.push(() => r.close());
  return { ...r, receipts };
}

/** A request signed by the independent standardwebhooks library, as a sender would. */
async function post(url: string, signWith: string, body: string, id = "msg_1", when = new Date()) {
  const signature = new Webhook(signWith).sign(id, when, body);
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(Math.floor(when.getTime() / 1000)), "webhook-signature": signature },
    body,
  });
}

describe("demo webhook receiver", () => {
  it("accepts a request signed with the shared secret and reports its alert", async () => {
    const secret = newSecret();
    const r = await receiver(secret);
    const res = await post(r.url, secret, JSON.stringify({ rule: "large-outflow", summary: "25,000 KAIA left" }), "kw_abc");
    expect(res.status).toBe(204);
    expect(r.receipts).toEqual([{ id: "kw_abc", verified: true, rule: "large-outflow", summary: "25,000 KAIA left" }]);
  });

  it("refuses a signature made with another secret, a changed body and a stale timestamp", async () => {
    const secret = newSecret();
    const r = await receiver(secret);
    expect((await post(r.url, newSecret(), '{"rule":"a"}')).status).toBe(401);
    const when = new Date();
    const signature = new Webhook(secret).sign("msg_2", when, '{"rule":"a"}');
    const tampered = await fetch(r.url, {
      method: "POST",
      headers: { "webhook-id": "msg_2", "webhook-timestamp": String(Math.floor(when.getTime() / 1000)), "webhook-signature": signature },
      body: '{"rule":"b"}',
    });
    expect(tampered.status).toBe(401);
    expect((await post(r.url, secret, '{"rule":"a"}', "msg_3", new Date(Date.now() - 10 * 60_000))).status).toBe(401);
    expect(r.receipts.map((x) => x.verified)).toEqual([false, false, false]);
  });

  it("describes a digest by its rule and count", async () => {
    const secret = newSecret();
    const r = await receiver(secret);
    await post(r.url, secret, JSON.stringify({ type: "digest", rule: "failed-call", count: 3, alerts: [] }));
    expect(r.receipts[0]).toMatchObject({ verified: true, rule: "failed-call", summary: "digest of 3 alerts" });
  });
});

describe("demo mail catcher", () => {
  it("reports the Message-ID, the decoded subject and the recipients of a message sent by nodemailer", async () => {
    const mails: MailReceipt[] = [];
    const smtp = await startSmtpCatcher({ onMail: (m) => mails.push(m) });
    cleanups.push(() => smtp.close());
    const transport = nodemailer.createTransport({ host: smtp.host, port: smtp.port, secure: false, ignoreTLS: true });
    cleanups.push(async () => transport.close());
    // Non-ASCII and long enough that nodemailer encodes it in several words.
    const subject = `[kaiawatch] large-outflow: 25,000.5 KAIA 0x7779…e7a6 → 0x40e4…531c ${"é→€😀 ".repeat(12)}`.trim();
    await transport.sendMail({ from: "a@demo.invalid", to: ["b@demo.invalid", "c@demo.invalid"], subject, text: "x", messageId: "<kw_1@kaiawatch>" });
    expect(mails).toEqual([{ messageId: "<kw_1@kaiawatch>", subject, to: ["b@demo.invalid", "c@demo.invalid"] }]);
  });

  it("decodes Q and B encoded words and leaves plain text alone", () => {
    expect(decodeMimeWords("plain subject")).toBe("plain subject");
    expect(decodeMimeWords("=?UTF-8?Q?caf=C3=A9_=E2=86=92?= ok")).toBe("café → ok");
    // One character's bytes split across two adjacent words.
    expect(decodeMimeWords("=?UTF-8?B?4oY=?= =?UTF-8?B?kg==?=")).toBe("→");
  });
});
