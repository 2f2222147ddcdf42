import { describe, expect, it } from "vitest";
import { ALERT_DOCUMENT_VERSION } from "../../src/model/alert-document.js";
import { alertId, buildAlert } from "../../src/rules/build-alert.js";
import type { BuildAlertInput } from "../../src/rules/build-alert.js";
import { validateSummaryTemplate } from "../../src/rules/summary-template.js";
import type { WatchedRecord } from "../../src/model/record.js";
import { COLLECTION, DEAD, EXCHANGE, HOT_WALLET, TOKEN, TX, ZERO, eventLog, internalTx, nftTransfer } from "./fixtures.js";

const NOW = new Date("2025-03-01T12:00:03.000Z");
const alert = (record: WatchedRecord, extra: Partial<BuildAlertInput> = {}) =>
  buildAlert({ rule: { name: "big-outflow" }, watch: "hot-wallet", record, network: "mainnet", explorerUrl: "https://kaiascan.io/", now: NOW, ...extra });

describe("alert identity", () => {
  it("is stable for a rule and a record, and differs otherwise", () => {
    const record = internalTx();
    const a = alert(record);
    const again = alert(internalTx(), { now: new Date("2030-01-01T00:00:00Z"), network: "kairos" });
    expect(a.id).toMatch(/^kw_[0-9a-f]{32}$/);
    expect(again.id).toBe(a.id);
    expect(alert(record, { rule: { name: "other-rule" } }).id).not.toBe(a.id);
    expect(alert(internalTx({ call_id: 2 })).id).not.toBe(a.id);
    // The separator keeps ("ab", "c") and ("a", "bc") apart.
    expect(alertId("ab", "c")).not.toBe(alertId("a", "bc"));
  });
});

describe("the alert document", () => {
  it("carries the rule's severity when it sets one, and no severity or status otherwise", () => {
    expect(alert(internalTx(), { rule: { name: "big-outflow", severity: "critical" } }).severity).toBe("critical");
    const plain = alert(internalTx());
    expect("severity" in plain).toBe(false);
    expect("status" in plain).toBe(false);
  });

  it("carries the rule, the source, the block and the record as received", () => {
    const record = internalTx();
    const doc = alert(record);
    expect(doc).toMatchObject({
      version: ALERT_DOCUMENT_VERSION,
      rule: "big-outflow",
      watch: "hot-wallet",
      source: "internal_transactions",
      network: "mainnet",
      block: 160_000_300,
      transaction_hash: TX,
      datetime: "2025-03-01T12:05:00.000Z",
      created_at: "2025-03-01T12:00:03.000Z",
    });
    expect(doc.record).toEqual(record.data);
    expect(alert(eventLog()).datetime).toBeNull();
    expect(alert(internalTx({ transaction_hash: undefined })).transaction_hash).toBeNull();
  });

  it("links to the explorer for every family", () => {
    expect(alert(internalTx()).links).toEqual({
      transaction: `https://kaiascan.io/tx/${TX}`,
      block: "https://kaiascan.io/block/160000300",
      account: `https://kaiascan.io/account/${HOT_WALLET}`,
    });
    expect(alert(nftTransfer(), { watchedAccount: HOT_WALLET }).links).toEqual({
      transaction: `https://kaiascan.io/tx/${TX}`,
      block: "https://kaiascan.io/block/160000200",
      account: `https://kaiascan.io/account/${HOT_WALLET}`,
      contract: `https://kaiascan.io/account/${COLLECTION}`,
      token: `https://kaiascan.io/nft/${COLLECTION}/42`,
    });
    expect(alert(eventLog()).links).toEqual({
      transaction: `https://kaiascan.io/tx/${TX}`,
      block: "https://kaiascan.io/block/160000123",
      contract: `https://kaiascan.io/account/${TOKEN}`,
      token: `https://kaiascan.io/token/${TOKEN}`,
    });
  });
});

describe("default summaries", () => {
  it("internal transactions: amount, type, from → to, and the failure", () => {
    expect(alert(internalTx()).summary).toBe("1,500 KAIA CALL 0x5aAe…eAed → 0xfB69…d359");
    expect(alert(internalTx({ amount: "1234567.000000000000000001" })).summary).toBe("1,234,567.000000000000000001 KAIA CALL 0x5aAe…eAed → 0xfB69…d359");
    expect(alert(internalTx({ error: "out of gas", transaction_status: { status: "Fail" } })).summary).toBe("1,500 KAIA CALL 0x5aAe…eAed → 0xfB69…d359 (Fail: out of gas)");
    expect(alert(internalTx({ error: "revert" })).summary).toMatch(/\(error: revert\)$/);
    expect(alert(internalTx({ type: "CREATE", to: undefined, amount: "0" })).summary).toBe("0 KAIA CREATE 0x5aAe…eAed → (no recipient)");
  });

  it("NFT transfers: token, collection address, mint / burn / transfer and direction", () => {
    expect(alert(nftTransfer({ from: ZERO }), {}).summary).toBe("NFT #42 of 0xD122…9aDb minted to 0x5aAe…eAed");
    expect(alert(nftTransfer({ from: HOT_WALLET, to: DEAD })).summary).toBe("NFT #42 of 0xD122…9aDb burned by 0x5aAe…eAed");
    expect(alert(nftTransfer(), { watchedAccount: HOT_WALLET }).summary).toBe("NFT #42 of 0xD122…9aDb sent 0xfB69…d359 → 0x5aAe…eAed (in)");
    expect(alert(nftTransfer({ token_count: "25" })).summary).toBe("25 × NFT #42 of 0xD122…9aDb sent 0xfB69…d359 → 0x5aAe…eAed");
  });

  it("event logs: event, contract address, first arguments", () => {
    expect(alert(eventLog()).summary).toBe("Transfer on 0xdbF0…C6FB: from 0x5aAe…eAed, to 0xfB69…d359, value 1000000000000000000000");
    expect(alert(eventLog({ type: "Unknown", items: [] })).summary).toBe("event 0xddf252ad… on 0xdbF0…C6FB");
    expect(alert(eventLog({ estimated_event_log: true, items: [] })).summary).toBe("Transfer (name estimated) on 0xdbF0…C6FB");
  });

  it("keeps hostile on-chain text on one bounded line", () => {
    const hostile = "Ownable: caller\r\nBcc: victim@example.com\u0000\u2028" + "x".repeat(500);
    const summary = alert(internalTx({ error: hostile, transaction_status: { status: "Fail", fail_message: hostile } })).summary;
    expect([..."\r\n\u0000\u2028"].some((c) => summary.includes(c))).toBe(false);
    expect(summary.length).toBeLessThan(200);
    expect(summary).toContain("Ownable: caller Bcc: victim@example.com");
    expect(summary).toMatch(/…\)$/);
    const log = alert(eventLog({ type: "Transfer\n@everyone", items: [{ name: "memo\n", value: "line1\nline2" }] })).summary;
    expect(log).toBe("Transfer @everyone on 0xdbF0…C6FB: memo  line1 line2");
  });
});

describe("summary templates", () => {
  it("substitutes record fields and derived values", () => {
    const summary = "{{rule}}: {{amount_kaia}} KAIA {{ type }} from {{from}} to {{to}} ({{status}}, failed={{failed}}) {{link.transaction}} {{record.transaction_status.status}}";
    const doc = alert(internalTx({ amount: "1500.25" }), { rule: { name: "big-outflow", summary } });
    expect(doc.summary).toBe(`big-outflow: 1500.25 KAIA CALL from ${HOT_WALLET} to ${EXCHANGE} (Success, failed=false) https://kaiascan.io/tx/${TX} Success`);
  });

  it("offers event arguments, topics and the default summary", () => {
    const doc = alert(eventLog(), { rule: { name: "r", summary: "[{{watch}}] {{event}} value={{args.value}} t1={{topics[1]}} | {{summary}}" } });
    expect(doc.summary).toBe(`[hot-wallet] Transfer value=1000000000000000000000 t1=0x0000000000000000000000005aaeb6053f3e94c9b9a09f33669435e7ef1beaed | ${alert(eventLog()).summary}`);
  });

  it("offers direction, mint and burn for NFT transfers; absent values render as nothing", () => {
    const doc = alert(nftTransfer({ to: undefined }), { watchedAccount: EXCHANGE, rule: { name: "r", summary: "#{{token_id}} {{direction}} burn={{burn}} mint={{mint}} to=[{{to}}] {{record.contract}}" } });
    expect(doc.summary).toBe(`#42 out burn=true mint=false to=[] {"contract_address":"${COLLECTION}","contract_type":"KIP17"}`);
  });

  it("inserts on-chain values as one line of plain text", () => {
    const doc = alert(internalTx({ error: "a\nb <script>" }), { rule: { name: "r", summary: "error: {{error}}" } });
    expect(doc.summary).toBe("error: a b <script>"); // escaping is each sink's job
  });

  it("is checked at config load: unknown variables and unclosed braces", () => {
    expect(validateSummaryTemplate("{{amount_kaia}} KAIA {{record.anything[0].deep}} {{link.block}}", "internal_transactions")).toEqual([]);
    expect(validateSummaryTemplate("{{args.value}} {{topics[3]}}", "event_logs")).toEqual([]);
    const unknown = validateSummaryTemplate("{{amount_kaia}}", "nft_transfers");
    expect(unknown[0]?.message).toMatch(/unknown variable "\{\{amount_kaia\}\}" for nft_transfers/);
    expect(validateSummaryTemplate("{{from", "nft_transfers")[0]?.message).toMatch(/unclosed/);
    expect(validateSummaryTemplate("{{ 1+1 }}", "nft_transfers")[0]?.message).toMatch(/not a variable name/);
    expect(validateSummaryTemplate(42, "nft_transfers")[0]?.message).toMatch(/text template/);
  });
});
