import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";
import type { AlertDocument } from "../../src/model/alert-document.js";

/** One alert as a receiver got it: under which delivery id (webhook-id / Message-ID). */
export interface Received {
  deliveryId: string;
  alert?: AlertDocument;
  /** Email carries no alert document: the alert id is the Message-ID's local part. */
  alertId: string;
}

/** Faults a receiver injected, by kind: what the daemon had to survive on the sink side. */
export type FaultCounts = Record<string, number>;

export interface WebhookReceiver {
  url: string;
  received: Received[];
  requests: number;
  faults: FaultCounts;
  badSignatures: number;
  /** Stop accepting connections (ECONNREFUSED) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  isDown(): boolean;
  close(): Promise<void>;
}

export interface WebhookReceiverOptions {
  /** Fraction of requests that fail (5xx, 429 + Retry-After, a reset before or after taking the alert). */
  failureRate: number;
  /** Standard Webhooks secret to verify every request with (the independent `standardwebhooks` package). */
  secret?: string;
  random: () => number;
}

function alertsOf(body: string): AlertDocument[] {
  const parsed = JSON.parse(body) as AlertDocument | { type: "digest"; alerts: AlertDocument[] };
  return "type" in parsed && parsed.type === "digest" ? parsed.alerts : [parsed as AlertDocument];
}

/**
 * A webhook receiver on 127.0.0.1 that fails a given fraction of requests in the ways real
 * ones do: 500, 503 and 429 with Retry-After, a connection dropped before it took the alert,
 * and one dropped after it took it (the sender cannot know: it must send again, same id).
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const verifier = options.secret === undefined ? undefined : new Webhook(options.secret);
  const sockets = new Set<Socket>();
  let down = false;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: "",
    received: [],
    requests: 0,
    faults: {},
    badSignatures: 0,
    down: async () => {
      down = true;
      await closeServer();
    },
    up: async () => {
      // The port was ours a moment ago; retry briefly if the kernel still holds it.
      for (let attempt = 0; ; attempt++) {
        try {
          await listen(port);
          down = false;
          return;
        } catch (error) {
          if (attempt > 50) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
    isDown: () => down,
    close: async () => {
      down = true;
      await closeServer();
    },
  };
  const fault = (kind: string) => (receiver.faults[kind] = (receiver.faults[kind] ?? 0) + 1);
  const take = (req: IncomingMessage, body: string) => {
    const deliveryId = String(req.headers["webhook-id"] ?? "");
    if (verifier) {
      try {
        verifier.verify(body, req.headers as Record<string, string>);
      } catch {
        receiver.badSignatures += 1;
      }
    }
    for (const alert of alertsOf(body)) receiver.received.push({ deliveryId, alert, alertId: alert.id });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    receiver.requests += 1;
    const r = options.random();
    const f = options.failureRate;
    if (r < f * 0.45) {
      fault("http_500");
      return res.writeHead(500).end("internal error");
    }
    if (r < f * 0.65) {
      fault("http_503_retry_after");
      return res.writeHead(503, { "retry-after": "1" }).end("busy");
    }
    if (r < f * 0.8) {
      fault("http_429_retry_after");
      return res.writeHead(429, { "retry-after": "1" }).end("slow down");
    }
    if (r < f * 0.9) {
      fault("reset_before_taking");
      return req.socket.destroy();
    }
    take(req, body);
    if (r < f) {
      fault("reset_after_taking");
      return req.socket.destroy();
    }
    res.writeHead(204).end();
  };

  let server: Server | undefined;
  const listen = (wanted: number) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          try {
            handle(req, res, Buffer.concat(chunks).toString("utf8"));
          } catch {
            fault("unreadable_body");
            res.writeHead(400).end();
          }
        });
      });
      s.on("connection", (socket: Socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      s.once("error", reject);
      s.listen(wanted, "127.0.0.1", () => {
        server = s;
        port = (s.address() as AddressInfo).port;
        resolve();
      });
    });
  const closeServer = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      for (const socket of sockets) socket.destroy();
      s.close(() => resolve());
    });

  await listen(0);
  receiver.url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}

export interface MailReceiver {
  host: string;
  port: number;
  received: Received[];
  requests: number;
  faults: FaultCounts;
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) that answers a fraction of messages with a temporary
 * 451 after the data was sent. Only the Message-ID is read from each message: it carries the
 * delivery id, which for a single alert is the alert id.
 */
export async function startMailReceiver(options: { failureRate: number; random: () => number }): Promise<MailReceiver> {
  const receiver: MailReceiver = { host: "127.0.0.1", port: 0, received: [], requests: 0, faults: {}, close: async () => undefined };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        receiver.requests += 1;
        if (options.random() < options.failureRate) {
          receiver.faults.smtp_451 = (receiver.faults.smtp_451 ?? 0) + 1;
          const error = Object.assign(new Error("4.3.0 temporary failure, try again later"), { responseCode: 451 });
          return callback(error);
        }
        const text = Buffer.concat(chunks).toString("utf8");
        const headers = text.slice(0, Math.max(0, text.indexOf("\r\n\r\n")));
        const messageId = /^Message-ID:\s*<([^@>]+)@kaiawatch>/im.exec(headers)?.[1];
        if (messageId === undefined) receiver.faults.mail_without_message_id = (receiver.faults.mail_without_message_id ?? 0) + 1;
        else receiver.received.push({ deliveryId: messageId, alertId: messageId });
        callback();
      });
    },
  });
  // A kaiawatch killed mid-conversation resets its connection: smtp-server emits that as an
  // 'error', which without a listener ends the whole torture. It is the torture working, not a fault.
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.server.address() as AddressInfo).port;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
