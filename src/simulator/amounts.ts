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
