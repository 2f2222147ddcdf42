import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventSignatureProblem, expandEnv, formatDuration, parseDuration, scheduleProblem, sourcesOfWatch } from "../../src/config/index.js";
import { closest, levenshtein } from "../../src/config/suggest.js";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1h30m", 5_400_000],
    ["0s", 0],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["30", "1.5s", "5 min", "", "-1s", "1w"])("refuses %j", (text) => {
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });

  it("hints at a unit for a bare number", () => {
    expect(() => parseDuration("30")).toThrow('add a unit, e.g. "30s" or "30ms"');
  });

  it("reads back what formatDuration writes", () => {
    fc.assert(fc.property(fc.nat({ max: 400 * 86_400_000 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  });
});

describe("expandEnv", () => {
  const env = { A: "alpha", EMPTY: "" };
  it.each([
    ["${A}", "alpha"],
    ["x-${A}-y", "x-alpha-y"],
    ["${B:-beta}", "beta"],
    ["${EMPTY:-fallback}", "fallback"],
    ["${EMPTY}", ""],
    ["${A:-unused}", "alpha"],
    ["$${A}", "${A}"],
    ["cost $5 and $$", "cost $5 and $$"],
    ["${B:-a:-b}", "a:-b"],
  ])("%j → %j", (text, value) => {
    expect(expandEnv(text, env)).toEqual({ value, problems: [] });
  });

  it("reports each unset variable with its offset", () => {
    const { problems } = expandEnv("a ${X} b ${Y:-ok} ${Z}", {});
    expect(problems.map((p) => [p.index, p.message.split(" (")[0]])).toEqual([
      [2, "environment variable X is not set"],
      [18, "environment variable Z is not set"],
    ]);
  });

  it("leaves text without references unchanged", () => {
    fc.assert(fc.property(fc.string().filter((s) => !s.includes("${")), (s) => expandEnv(s, env).value === s));
  });
});

describe("eventSignatureProblem", () => {
  it.each([
    "Transfer(address,address,uint256)",
    "Approval(address,address,uint256)",
    "Ping()",
    "Batch(address,uint256[],bytes32,(uint8,bool)[2][])",
    "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925",
    "Transfer(address indexed from, address indexed to, uint256 value)",
    "Transfer(address,address,uint256 value)",
  ])("accepts %s", (text) => {
    expect(eventSignatureProblem(text)).toBeUndefined();
  });

  it.each([
    ["Transfer(address indexed from, uint)", "uint256/int256"],
    ["Transfer(address from to)", 'expected "," or ")"'],
    ["Transfer(address,uint)", "uint256/int256"],
    ["Transfer(address,uint7)", "unknown or malformed"],
    ["Transfer(bytes33)", "unknown or malformed"],
    ["Transfer(address", 'no ")"'],
    ["9Lives(address)", "not an event name"],
    ["Transfer", "write Name(type,…)"],
    ["0x1234", "not a topic hash"],
  ])("refuses %s", (text, fragment) => {
    expect(eventSignatureProblem(text)).toContain(fragment);
  });
});

describe("scheduleProblem", () => {
  it("accepts six-field patterns and nicknames", () => {
    expect(scheduleProblem("*/10 * * * * *")).toBeUndefined();
    expect(scheduleProblem("@hourly")).toBeUndefined();
  });
  it("refuses a seventh field (croner's year): the message says six, and a year far off never fires", () => {
    expect(scheduleProblem("*/10 * * * * * 2099")).toBe('a schedule has 6 fields, seconds first (e.g. "*/10 * * * * *"); this one has 7');
    expect(scheduleProblem("0 0 * * * * *")).toContain("this one has 7");
    expect(scheduleProblem("0 0 * * * * * *")).toContain("this one has 8");
    expect(scheduleProblem("0 0 * *")).toContain("this one has 4");
  });
  it("refuses five fields, invalid values and patterns that never fire", () => {
    expect(scheduleProblem("*/10 * * * *")).toContain("6 fields, seconds first");
    expect(scheduleProblem("0 */0 * * * *")).toContain("not a schedule:");
    expect(scheduleProblem("0 0 0 30 2 *")).toBe("this schedule never fires");
  });
});

describe("suggestions", () => {
  it("measures edits and only suggests within two", () => {
    expect(levenshtein("lagblocks", "lag_blocks")).toBe(1);
    expect(levenshtein("", "abc")).toBe(3);
    expect(closest("shedule", ["schedule", "start"])).toBe("schedule");
    expect(closest("colour", ["schedule", "start"])).toBeUndefined();
  });
  it("is a distance: symmetric, zero only for equal strings", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = levenshtein(a, b);
        return d === levenshtein(b, a) && (d === 0) === (a === b) && d <= Math.max(a.length, b.length);
      }),
    );
  });
});

describe("sourcesOfWatch", () => {
  const base = { name: "w", schedule: "* * * * * *", start: { kind: "latest" as const }, max_window_blocks: 1000, jitter: 0, via: "auto" as const, source: "explorer" as const };
  it("names the families each kind of watch produces", () => {
    expect(sourcesOfWatch({ ...base, kind: "account", account: "0x", sources: ["internal_transactions"], tokens: [], methods: [] })).toEqual(["internal_transactions"]);
    expect(sourcesOfWatch({ ...base, kind: "collection", collection: "0x" })).toEqual(["nft_transfers"]);
    expect(sourcesOfWatch({ ...base, kind: "contract", contract: "0x", events: ["A()", "B()"] })).toEqual(["event_logs"]);
    expect(sourcesOfWatch({ ...base, kind: "every_block", every_block: true })).toEqual(["internal_transactions"]);
  });
});
