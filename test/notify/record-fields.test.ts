import { describe, expect, it } from "vitest";
import { recordFieldExists } from "../../src/notify/record-fields.js";

describe("record fields a silence may match", () => {
  it("knows each family's fields, nested paths, list items by index and NAME for NAME_address", () => {
    expect(recordFieldExists("nft_transfers", "contract.contract_address")).toBe(true);
    expect(recordFieldExists("nft_transfers", "contract")).toBe(true);
    expect(recordFieldExists("nft_transfers", "token_id")).toBe(true);
    expect(recordFieldExists("nft_transfers", "amount")).toBe(false);
    expect(recordFieldExists("event_logs", "contract")).toBe(true); // contract_address
    expect(recordFieldExists("event_logs", "topics.1")).toBe(true);
    expect(recordFieldExists("event_logs", "items.0.value")).toBe(true);
    expect(recordFieldExists("event_logs", "items.x")).toBe(false);
    expect(recordFieldExists("event_logs", "topics.1.x")).toBe(false);
    expect(recordFieldExists("internal_transactions", "transaction_status.fail_message")).toBe(true);
    expect(recordFieldExists("internal_transactions", "token_id")).toBe(false);
  });
});
