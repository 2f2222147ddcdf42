import { describe, expect, it } from "vitest";
import { readRecordField } from "../../src/notify/grouping.js";
import { recordFieldExists } from "../../src/notify/record-fields.js";
import { newSilence, silenceMatchesRecord } from "../../src/notify/silences.js";

/**
 * Issue 30: one vocabulary of record fields. Rules say `status`/`fail_message`, the record
 * `transaction_status.status`: silences, group.by and cooldown_key take both.
 */
const failedFrame = (callId: number) => ({
  call_id: callId,
  block_id: 100,
  transaction_hash: "0xABC",
  from: "0x1111111111111111111111111111111111111111",
  to: "0x2222222222222222222222222222222222222222",
  amount: "0",
  transaction_status: { status: "Fail", fail_message: "out of gas" },
});

describe("record field names", () => {
  it("reads a rule's names for record fields as the record's own", () => {
    const record = failedFrame(3);
    expect(readRecordField(record, "status")).toBe("fail");
    expect(readRecordField(record, "transaction_status.status")).toBe("fail");
    expect(readRecordField(record, "fail_message")).toBe("out of gas");
    expect(readRecordField(record, "transaction")).toBe("0xabc");
    expect(readRecordField(record, "block")).toBe("100");
    expect(readRecordField({ block_number: 7 }, "block")).toBe("7");
  });

  it("groups every call frame of one failed transaction under one key (group.by / cooldown_key: transaction)", () => {
    const keys = new Set([0, 1, 2, 3, 4].map((i) => readRecordField(failedFrame(i), "transaction")));
    expect([...keys]).toEqual(["0xabc"]);
  });

  it("lets a silence match on status=Fail as a rule writes it", () => {
    expect(recordFieldExists("internal_transactions", "status")).toBe(true);
    expect(recordFieldExists("internal_transactions", "fail_message")).toBe(true);
    expect(recordFieldExists("event_logs", "estimated")).toBe(true);
    expect(recordFieldExists("nft_transfers", "status")).toBe(false);
    const silence = newSilence({ rule: "failed-calls", match: { status: "Fail" }, forMs: 60_000, reason: "test", now: 0 });
    expect(silenceMatchesRecord(silence, "failed-calls", failedFrame(0))).toBe(true);
    expect(silenceMatchesRecord(silence, "failed-calls", { ...failedFrame(0), transaction_status: { status: "Success" } })).toBe(false);
  });
});
