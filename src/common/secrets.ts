/**
 * The set of secret values (API key, SMTP password, webhook URLs and secrets, bot tokens)
 * that must never reach a log line. The logger scrubs every serialized line through it, so
 * a secret is redacted even when it hides inside an error message or a URL.
 */
export interface SecretRedactor {
  add(value: string | undefined): void;
  redact(text: string): string;
}

/** Values shorter than this are too likely to occur by chance ("true", a port) to scrub. */
const MIN_SECRET_LENGTH = 6;

export function createSecretRedactor(): SecretRedactor {
  const secrets = new Set<string>();
  let sorted: string[] = [];
  return {
    add(value) {
      if (value === undefined || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
      secrets.add(value);
      // Longest first, so a secret that contains another is replaced whole.
      sorted = [...secrets].sort((a, b) => b.length - a.length);
    },
    redact(text) {
      if (sorted.length === 0) return text;
      let out = text;
      for (const secret of sorted) {
        if (out.includes(secret)) out = out.split(secret).join("[redacted]");
        // Secrets also appear JSON-escaped inside a serialized line.
        const escaped = JSON.stringify(secret).slice(1, -1);
        if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join("[redacted]");
      }
      return out;
    },
  };
}
