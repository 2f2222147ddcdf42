import { createHmac } from "node:crypto";

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the receiver verifies
 * `v1,base64(HMAC-SHA256(key, "id.timestamp.body"))` with the shared secret, checks the
 * timestamp is recent, and drops a `webhook-id` it has already seen.
 */

/**
 * The signing key from a `whsec_…` secret (the prefix is optional, as in the reference
 * libraries). Returns undefined when the secret is not base64 or decodes to nothing.
 */
export function decodeWebhookSecret(secret: string): Uint8Array | undefined {
  const b64 = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return undefined;
  const key = Buffer.from(b64, "base64");
  return key.length === 0 ? undefined : key;
}

export function standardWebhookHeaders(key: Uint8Array, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const signature = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${signature}`,
  };
}
