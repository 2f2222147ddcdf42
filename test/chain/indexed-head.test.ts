import { describe, expect, it } from "vitest";
import { indexedHead } from "../../src/chain/indexed-head.js";

describe("indexedHead", () => {
  it("is the chain head minus lag_blocks", () => {
    expect(indexedHead(1_000, 2)).toBe(998);
    expect(indexedHead(1_000, 0)).toBe(1_000);
  });

  it("never goes below block 0 on a chain younger than the lag", () => {
    expect(indexedHead(1, 2)).toBe(0);
    expect(indexedHead(0, 0)).toBe(0);
  });
});
