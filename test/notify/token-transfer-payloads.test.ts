import { describe, expect, it } from "vitest";
import { TRANSFER_TOPIC } from "../../src/chain/token-transfer.js";
import type { EventLog } from "../../src/explorer/types.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { buildAlert } from "../../src/rules/build-alert.js";
import { buildPagerDutyEvents, type PagerDutyTrigger } from "../../src/notify/sinks/pagerduty.js";
import { buildTeamsMessage } from "../../src/notify/sinks/teams.js";
import type { Delivery } from "../../src/notify/sink.js";
import { normalizeEventLog } from "../../src/watch/normalize.js";

/**
 * Issue 28: PagerDuty's custom_details and Teams' facts for a token transfer tell the whole
 * transfer (amount in token units, symbol, contract, from and to) as the log's topics and data
 * say it, never as the explorer's decoded items say it: here they disagree on every point.
 */
const TOKEN = "0x8e8400000000000000000000000000000000092a";
const SENDER = "0x1111111111111111111111111111111111111111";
const RECIPIENT = "0x40e4000000000000000000000000000000005a1c";
const DECOY = "0xdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef";
const pad = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;

function transferAlert(): AlertDocument {
  const log: EventLog = {
    log_index: 3,
    contract_address: TOKEN,
    type: "Transfer",
    topics: [TRANSFER_TOPIC, pad(SENDER), pad(RECIPIENT)],
    // 1,234,567.000001 with 6 decimals.
    data: `0x${(1_234_567_000_001n).toString(16).padStart(64, "0")}`,
    // The explorer's decoded guess: wrong sender, wrong recipient, wrong value.
    items: [
      { name: "from", value: DECOY },
      { name: "to", value: SENDER },
      { name: "value", value: "999" },
    ],
    block_number: 100_000_123,
    transaction_hash: `0x${"ab".repeat(32)}`,
  };
  return buildAlert({
    rule: { name: "big-usdt" },
    watch: "usdt",
    record: normalizeEventLog(log),
    network: "mainnet",
    explorerUrl: "https://kaiascan.io",
    now: new Date("2026-01-01T00:00:00Z"),
    token: { address: TOKEN, decimals: 6, symbol: "USDT" },
  });
}

const deliveryOf = (alert: AlertDocument): Delivery => ({ id: alert.id, rule: alert.rule, alerts: [alert], attempt: 1 });

describe("a token transfer's payload", () => {
  it("PagerDuty: custom_details carry the amount in token units, the symbol, the contract, and from/to of the topics; the base-unit value is labelled", () => {
    const [event] = buildPagerDutyEvents(deliveryOf(transferAlert()), { routing_key: "R0utingKey0123456789abcdefABCDEF", severity: "error" });
    const details = (event as PagerDutyTrigger).payload.custom_details;
    expect(details).toMatchObject({
      Amount: "1234567.000001 USDT",
      "Amount (base units)": "1234567000001",
      Token: "USDT",
      "Token contract": TOKEN,
      From: SENDER,
      To: RECIPIENT,
    });
    // Nothing of the explorer's guess.
    expect(JSON.stringify(event)).not.toContain(DECOY);
    expect(Object.values(details)).not.toContain("999");
  });

  it("Teams: the facts say the same", () => {
    const message = buildTeamsMessage(deliveryOf(transferAlert()));
    const lines = message.attachments[0].content.body.map((block) => block.inlines.map((inline) => inline.text).join(""));
    expect(lines).toEqual(
      expect.arrayContaining(["Amount: 1234567.000001 USDT", "Amount (base units): 1234567000001", "Token: USDT", `Token contract: ${TOKEN}`, `From: ${SENDER}`, `To: ${RECIPIENT}`]),
    );
    expect(JSON.stringify(message)).not.toContain(DECOY);
    expect(lines).not.toContain("value: 999");
  });
});
