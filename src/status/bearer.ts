import { createHash, timingSafeEqual } from "node:crypto";

/**
 * True when an Authorization header carries exactly `Bearer <token>`. Both sides are hashed
 * first so that the comparison takes the same time whatever the length or the first
 * differing byte of a guess.
 */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "");
  const given = match?.[1] ?? "";
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(token)) && match !== null;
}
