/**
 * A terminal table of strangers' text (receiver errors, alert summaries, on-chain strings):
 * one cell never carries a control or bidi character to the terminal, and columns line up.
 */

/** The text with every control and bidi character (newlines too: one cell, one line) shown as \uXXXX. */
export function printableCell(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Columns padded to their widest cell, two spaces apart; the last column unpadded (it is the long one). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}
