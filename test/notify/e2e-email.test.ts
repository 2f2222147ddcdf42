import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AddressObject } from "mailparser";
import { main } from "../../src/cli/main.js";
import type { DrainResult } from "../../src/notify/dispatcher.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { configFromText, memoryIO, tempDir } from "../helpers/harness.js";
import { withDaemon } from "../helpers/with-daemon.js";
import { addFailedCalls, startSmtp, type Smtp, type SmtpRejection } from "./e2e-support.js";

/**
 * Email end to end: the daemon scans the simulator, and its email sink talks to a real SMTP
 * server on 127.0.0.1 whose messages are read back with mailparser.
 */
let sim: Simulator;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  // No generated records: each test adds the block it needs.
  sim = await createSimulator({ seed: 9, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Run {
  delivery: DrainResult;
  entries: OutboxEntry[];
  configPath: string;
}

/** Writes the config (for CLI commands), runs `once` through the real daemon, returns the outbox as left. */
async function runOnce(smtp: Smtp, start: number, sinkExtra = ""): Promise<Run> {
  const dir = tempDir("kaiawatch-e2e-email-");
  cleanups.push(dir.remove);
  const configPath = join(dir.path, "config.yaml");
  const text = `
explorer: { base_url: "${sim.url}", requests_per_second: 500 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, explorer_url: "https://kaiascan.io" }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { start: ${start}, jitter: 0s }
watches:
  - { name: treasury, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: failed-calls, watch: treasury, when: { status: Fail }, notify: [ops-email] }
sinks:
  ops-email:
    type: email
    smtp: { host: 127.0.0.1, port: ${smtp.port}, starttls: false, timeout: 10s }
    from: "kaiawatch <alerts@example.com>"
    to: [ops@example.com, "On Call <oncall@example.com>"]
    cc: [audit@example.com]
${sinkExtra}
`;
  writeFileSync(configPath, text);
  return withDaemon({ config: configFromText(text) }, async (daemon) => {
    const { delivery } = await daemon.runOnce({ drainTimeoutMs: 20_000 });
    return { delivery, entries: await daemon.store.listOutbox({ sink: "ops-email" }), configPath };
  });
}

async function smtpServer(reject?: (attempt: number) => SmtpRejection | undefined): Promise<Smtp> {
  const smtp = await startSmtp(reject);
  cleanups.push(() => smtp.close());
  return smtp;
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  return (Array.isArray(field) ? field : field === undefined ? [] : [field]).flatMap((a) => a.value.map((v) => v.address ?? ""));
}

describe("email through a real SMTP server", () => {
  it("sends headers, a plain-text and an escaped HTML part, and a Message-ID derived from the alert id", async () => {
    const smtp = await smtpServer();
    const block = addFailedCalls(sim, ["<script>alert(1)</script> & <b>bold</b>", "line one\r\nBcc: victim@example.com\r\nX-Evil: 1"]);

    const run = await runOnce(smtp, block);

    expect(run.delivery.delivered).toBe(2);
    expect(smtp.mails).toHaveLength(2);
    const byMessageId = new Map(smtp.mails.map((mail, i) => [mail.messageId, { mail, recipients: smtp.recipients[i] }]));
    for (const entry of run.entries) {
      expect(entry.state).toBe("delivered");
      const found = byMessageId.get(`<${entry.alert.id}@kaiawatch>`);
      expect(found, `a mail with the Message-ID of alert ${entry.alert.id}`).toBeDefined();
      const { mail, recipients } = found!;
      expect(mail.from?.value).toEqual([{ address: "alerts@example.com", name: "kaiawatch" }]);
      expect(addresses(mail.to)).toEqual(["ops@example.com", "oncall@example.com"]);
      expect(addresses(mail.cc)).toEqual(["audit@example.com"]);
      expect(recipients?.sort()).toEqual(["audit@example.com", "oncall@example.com", "ops@example.com"]);
      expect(mail.subject).toContain("failed-calls");
      expect(mail.subject).not.toMatch(/[\r\n]/);
      expect(mail.date).toBeInstanceOf(Date);
      // Both parts, each saying what happened, with the transaction link.
      expect(mail.text).toContain(entry.alert.transaction_hash);
      expect(String(mail.html)).toContain(`href="https://kaiascan.io/tx/${entry.alert.transaction_hash}"`);
    }

    const script = smtp.mails.find((m) => m.text?.includes("<script>alert(1)</script>"));
    expect(script, "the plain-text part shows the text as it is").toBeDefined();
    expect(String(script!.html)).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");
    expect(String(script!.html)).not.toContain("<script");
    expect(String(script!.html)).not.toContain("<b>bold");

    const injection = smtp.mails.find((m) => m.text?.includes("victim@example.com"));
    expect(injection).toBeDefined();
    expect(injection!.headers.has("bcc")).toBe(false);
    expect(injection!.headers.has("x-evil")).toBe(false);
    expect(smtp.recipients.flat()).not.toContain("victim@example.com");
  });

  it("a server that answers 451 and then 250 gets the mail once", async () => {
    const smtp = await smtpServer((attempt) => (attempt === 0 ? { code: 451, message: "4.7.1 greylisted, try again later" } : undefined));
    const block = addFailedCalls(sim, ["execution reverted: insufficient balance"]);

    const run = await runOnce(smtp, block);

    expect(smtp.attempts).toBe(2);
    expect(smtp.mails).toHaveLength(1);
    expect(run.delivery).toMatchObject({ delivered: 1, retried: 1, dead: 0, pending: 0 });
    const [entry] = run.entries;
    expect(entry).toMatchObject({ state: "delivered", attempts: 2 });
    expect(entry?.last_error).toContain("451");
    expect(smtp.mails[0]?.messageId).toBe(`<${entry!.alert.id}@kaiawatch>`);
  });

  it("a 550 makes a dead letter at once, listed by `kaiawatch outbox --state dead`", async () => {
    const smtp = await smtpServer(() => ({ code: 550, message: "5.1.1 mailbox unavailable" }));
    const block = addFailedCalls(sim, ["execution reverted: deadline expired"]);

    const run = await runOnce(smtp, block);

    expect(smtp.attempts).toBe(1);
    expect(smtp.mails).toHaveLength(0);
    expect(run.delivery).toMatchObject({ delivered: 0, dead: 1, pending: 0 });
    const [entry] = run.entries;
    expect(entry).toMatchObject({ state: "dead", attempts: 1 });

    const io = memoryIO();
    const code = await main(["outbox", "--config", run.configPath, "--state", "dead"], io);
    expect(code, io.err()).toBe(0);
    expect(io.out()).toContain(entry!.id);
    expect(io.out()).toContain("ops-email");
    expect(io.out()).toContain("permanent error");
    expect(io.out()).toContain("550");
    expect(io.out()).toContain("1 dead");
  });
});
