/** 1 KAIA = 10^18 kei. */
export const KEI_PER_KAIA = 10n ** 18n;

/** An exact KAIA decimal string from kei: 1500000000000000000n → "1.5". */
export function formatKaia(kei: bigint): string {
  const sign = kei < 0n ? "-" : "";
  const abs = kei < 0n ? -kei : kei;
  const whole = abs / KEI_PER_KAIA;
  const fraction = (abs % KEI_PER_KAIA).toString().padStart(18, "0").replace(/0+$/, "");
  return `${sign}${whole}${fraction ? `.${fraction}` : ""}`;
}

/**
 * kei from an exact KAIA decimal string ("1.5" → 1500000000000000000n); undefined for anything
 * else. The simulator's own, not the client's parser: the reference must not share its bugs.
 */
export function parseKaia(text: string): bigint | undefined {
  const m = /^(\d+)(?:\.(\d{1,18}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1] as string) * KEI_PER_KAIA + BigInt((m[2] ?? "").padEnd(18, "0"));
}
