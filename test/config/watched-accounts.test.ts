import { describe, expect, it } from "vitest";
import { watchedAccountsOf } from "../../src/config/watched-accounts.js";
import type { WatchConfig } from "../../src/config/types.js";

const ACCOUNT = "0xAbC0000000000000000000000000000000000001";
const LOWER = ACCOUNT.toLowerCase();

describe("the accounts a watch is relative to", () => {
  it("an account watch's set of one reads like a Set of its lowercase account", () => {
    const one = watchedAccountsOf({ kind: "account", account: ACCOUNT } as WatchConfig)!;
    const set: ReadonlySet<string> = new Set([LOWER]);
    expect(one.size).toBe(set.size);
    expect(one.has(LOWER)).toBe(true);
    expect(one.has(ACCOUNT)).toBe(false);
    expect(one.has("0x0000000000000000000000000000000000000002")).toBe(false);
    expect([...one]).toEqual([...set]);
    expect([...one.values()]).toEqual([...set.values()]);
    expect([...one.keys()]).toEqual([...set.keys()]);
    expect([...one.entries()]).toEqual([...set.entries()]);
    const seen: unknown[] = [];
    one.forEach(function (this: unknown, value, key, whole) {
      seen.push([value, key, whole === one, this]);
    }, "that");
    expect(seen).toEqual([[LOWER, LOWER, true, "that"]]);
  });

  it("an accounts watch's list is one set, shared by every call; other kinds have none", () => {
    const watch = { kind: "accounts", accounts: [LOWER, "0x0000000000000000000000000000000000000002"] } as WatchConfig;
    expect(watchedAccountsOf(watch)).toBe(watchedAccountsOf(watch));
    expect(watchedAccountsOf(watch)!.size).toBe(2);
    expect(watchedAccountsOf({ kind: "contract", contract: LOWER } as WatchConfig)).toBeUndefined();
  });
});
