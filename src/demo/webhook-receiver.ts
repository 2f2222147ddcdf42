import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeWebhookSecret } from "../notify/standard-webhooks.js";

/** One request the receiver got, as a receiver would judge it. */
export interface WebhookReceipt {
  /** The `webhook-id` header: the same on every retry of a delivery. */
  id: string;
  /** The Standard Webhooks signature matched the shared secret and the timestamp is recent. */
  verified: boolean;
  /** The alert's rule, or the digest's. */
  rule: string;
  /** The alert's summary, or "N alerts" for a digest. */
  summary: string;
}

export interface WebhookReceiver {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 5 << 20;
/** The tolerance the Standard Webhooks libraries use against replays. */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * Checks `webhook-signature` the way a receiver does: HMAC-SHA256 of "id.timestamp.body"
 * with the secret, any of the space-separated `v1,` signatures, compared in constant time.
 */
export function verifyStandardWebhook(secret: string, headers: IncomingMessage["headers"], body: string, nowSeconds: number): boolean {
  const key = decodeWebhookSecret(secret);
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (key === undefined || typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false;
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds) || Math.abs(nowSeconds - seconds) > TOLERANCE_SECONDS) return false;
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2);
    if (version !== "v1" || value === undefined) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function describeBody(body: string): { rule: string; summary: string } {
  try {
    const doc = JSON.parse(body) as { type?: unknown; rule?: unknown; summary?: unknown; count?: unknown };
    const rule = typeof doc.rule === "string" ? doc.rule : "(no rule)";
    if (doc.type === "digest") return { rule, summary: `digest of ${String(doc.count)} alerts` };
    return { rule, summary: typeof doc.summary === "string" ? doc.summary : "" };
  } catch {
    return { rule: "(not JSON)", summary: "" };
  }
}

/**
 * A webhook endpoint on 127.0.0.1 for the demo: it answers 204 to a correctly signed
 * request and 401 otherwise (so a wrong secret shows up as retries), and reports each one.
 */
export async function startWebhookReceiver(options: { secret: string; onDelivery: (receipt: WebhookReceipt) => void; now?: () => number }): Promise<WebhookReceiver> {
  const now = options.now ?? Date.now;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (res.writableEnded) return;
      const body = Buffer.concat(chunks).toString("utf8");
      const verified = req.method === "POST" && verifyStandardWebhook(options.secret, req.headers, body, Math.floor(now() / 1000));
      const id = typeof req.headers["webhook-id"] === "string" ? req.headers["webhook-id"] : "(no id)";
      options.onDelivery({ id, verified, ...describeBody(body) });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/kaiawatch`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
