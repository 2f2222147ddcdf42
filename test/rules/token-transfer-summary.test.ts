import { describe, expect, it } from "vitest";
import { buildAlert, tokenTransferSummary } from "../../src/rules/build-alert.js";
import { tokenSymbolText } from "../../src/rules/token-symbol.js";
import { TRANSFER_TOPIC } from "../../src/chain/token-transfer.js";
import { normalizeEventLog } from "../../src/watch/normalize.js";
import { escapeHtml, escapeSlack } from "../../src/notify/escape.js";
import { HOSTILE_STRINGS } from "../../src/simulator/hostile.js";

const TOKEN = "0x8e840000000000000000000000000000000092a1";
const WALLET = "0x1111111111111111111111111111111111111111";
const OTHER = "0x40e4000000000000000000000000000000005a1c";

describe("the summary of a token transfer", () => {
  it("writes the exact amount with the symbol next to the token's address", () => {
    expect(tokenTransferSummary({ address: TOKEN, decimals: 6, symbol: "USDT" }, { from: WALLET, to: OTHER, value: 1_234_567_000_001n }, WALLET)).toBe(
      "1,234,567.000001 USDT (0x8e84…92a1) out: 0x1111…1111 → 0x40e4…5a1c",
    );
    expect(tokenTransferSummary({ address: TOKEN, decimals: 0, symbol: undefined }, { from: OTHER, to: WALLET, value: 7n }, WALLET)).toBe("7 tokens (0x8e84…92a1) in: 0x40e4…5a1c → 0x1111…1111");
  });

  it.each(HOSTILE_STRINGS.map((s) => [s]))("keeps a hostile symbol on one short line, next to the address, and inert once escaped: %j", (symbol) => {
    const summary = tokenTransferSummary({ address: TOKEN, decimals: 18, symbol: `${symbol}${symbol}` }, { from: WALLET, to: OTHER, value: 10n ** 18n }, WALLET);
    // eslint-disable-next-line no-control-regex
    expect(summary).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(summary).toMatch(/^1 .* \(0x8e84…92a1\) out: 0x1111…1111 → 0x40e4…5a1c$/);
    expect(Array.from(summary).length).toBeLessThan(100);
    expect(escapeSlack(summary)).not.toMatch(/<!channel>|<@U|<https?:/);
    expect(escapeHtml(summary)).not.toMatch(/<script|<img/);
  });

  it("is the same symbol text in every alert of the token: a transfer's token.symbol is cut as its summary and a balance alert's record.symbol are", () => {
    const symbol = "A-VERY-LONG-TOKEN-SYMBOL-OF-FORTY-CHARS!";
    const pad = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;
    const alert = buildAlert({
      rule: { name: "r" },
      watch: "w",
      record: normalizeEventLog({ log_index: 0, contract_address: TOKEN, topics: [TRANSFER_TOPIC, pad(WALLET), pad(OTHER)], data: `0x${"1".padStart(64, "0")}`, items: [], block_number: 1 }),
      network: "mainnet",
      explorerUrl: "https://kaiascan.io",
      now: new Date(0),
      token: { address: TOKEN, decimals: 0, symbol },
    });
    const text = tokenSymbolText(symbol);
    expect(Array.from(text)).toHaveLength(24);
    expect(alert.token?.symbol).toBe(text);
    expect(alert.summary).toContain(` ${text} (`);
  });
});
