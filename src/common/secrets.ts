/**
 * The set of secret values (API key, SMTP password, webhook URLs and secrets, bot tokens,
 * the secret parts of endpoint URLs) that must never leave the process: one per process,
 * learnt from the config at load and at every reload (secretsOfConfig). Each door by which
 * text leaves scrubs it here, by value, whatever shape the secret has: the logger every
 * serialized line, the status server every answer, the operational monitor every alert
 * about kaiawatch itself (whose texts quote error bodies: an explorer's 401 that quotes the
 * key, a node's 404 that quotes its URL).
 */
export interface SecretRedactor {
  add(value: string | undefined): void;
  redact(text: string): string;
  /** `value` with every string in it redacted, however deep (object keys are kept). */
  redactDeep<T>(value: T): T;
}

/** Values shorter than this are too likely to occur by chance ("true", a port) to scrub. */
const MIN_SECRET_LENGTH = 6;

export function createSecretRedactor(): SecretRedactor {
  const secrets = new Set<string>();
  let sorted: string[] = [];
  const redactDeep = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return redact(value);
    if (depth > 64 || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDeep(inner, depth + 1)]));
  };
  function redact(text: string): string {
    if (sorted.length === 0) return text;
    let out = text;
    for (const secret of sorted) {
      if (out.includes(secret)) out = out.split(secret).join("[redacted]");
      // Secrets also appear JSON-escaped inside a serialized line.
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join("[redacted]");
    }
    return out;
  }
  return {
    add(value) {
      if (value === undefined || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
      secrets.add(value);
      // Longest first, so a secret that contains another is replaced whole.
      sorted = [...secrets].sort((a, b) => b.length - a.length);
    },
    redact,
    redactDeep: <T>(value: T): T => (sorted.length === 0 ? value : (redactDeep(value, 0) as T)),
  };
}
