import { describe, expect, it } from "vitest";
import { alertLabels, formatLabels, labelNameProblem, labelValueProblem, labelsOfAlert } from "../../src/notify/labels.js";
import { MatcherError, matches, parseMatcher, parseMatcherList, parseMatchers } from "../../src/notify/matchers.js";

describe("parseMatcher", () => {
  it("reads the four operators, quoted and bare values, with spaces around", () => {
    expect(parseMatcher('severity="critical"')).toMatchObject({ name: "severity", type: "=", value: "critical" });
    expect(parseMatcher("team != ops")).toMatchObject({ name: "team", type: "!=", value: "ops" });
    expect(parseMatcher('watch=~"hot-.*"')).toMatchObject({ name: "watch", type: "=~", value: "hot-.*" });
    expect(parseMatcher("source!~nft_.*")).toMatchObject({ name: "source", type: "!~", value: "nft_.*" });
    expect(parseMatcher('note="say \\"hi\\"\\n"').value).toBe('say "hi"\n');
    expect(parseMatcher("team=").value).toBe("");
    expect(String(parseMatcher("team =~ a|b"))).toBe('team=~"a|b"');
  });

  it("refuses what is not a matcher, with Alertmanager's message and a KW code", () => {
    // Alertmanager accepts `1team=x` (its UTF-8 parser) and `team="\q"` (a literal backslash), so do we.
    expect(parseMatcher("1team=x").name).toBe("1team");
    expect(parseMatcher('team="\\q"').value).toBe("\\q");
    expect(() => parseMatcher("severity")).toThrow("bad matcher format: severity");
    for (const text of ["severity", "=x", 'team="open', "team=a\"b", "team=~(a", "team=~a\\1"]) {
      expect(() => parseMatcher(text), text).toThrow(MatcherError);
    }
    try {
      parseMatcher("team=~(a");
    } catch (error) {
      expect((error as MatcherError).code).toBe("KW_MATCHER_INVALID");
      expect((error as Error).message).toBe("error parsing regexp: missing closing ): `^(?:(a)$`");
    }
  });

  it("anchors regular expressions at both ends, as Alertmanager does", () => {
    const warn = parseMatcher("severity=~warn");
    expect(warn.test("warn")).toBe(true);
    expect(warn.test("warning")).toBe(false);
    expect(warn.test("prewarn")).toBe(false);
    const alternation = parseMatcher('service=~"mysql|cassandra"');
    expect(alternation.test("mysql")).toBe(true);
    expect(alternation.test("mysqlx")).toBe(false);
    expect(alternation.test("xcassandra")).toBe(false);
    expect(parseMatcher("service!~mysql|cassandra").test("cassandra")).toBe(false);
  });

  it("matches in linear time: a pattern that backtracks exponentially in JavaScript is instant", () => {
    const started = performance.now();
    expect(parseMatcher("x=~(a|aa)+").test(`${"a".repeat(5000)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(() => parseMatcher(`x=~"a{1000}"`)).toThrow(/instructions/);
    expect(() => parseMatcher(`x=~${"a".repeat(300)}`)).toThrow(/at most 256/);
  });
});

describe("parseMatchers", () => {
  it("reads a line as an Alertmanager config does: braces, commas, one or several", () => {
    const forms = ['{owner="team-A"}', 'owner="team-A"', "{owner=team-A,}", ' { owner = "team-A" } '];
    for (const text of forms) expect(parseMatchers(text).map(String), text).toEqual(['owner="team-A"']);
    expect(parseMatchers('{owner="team-A", severity=~"warn|crit"}').map(String)).toEqual(['owner="team-A"', 'severity=~"warn|crit"']);
    expect(parseMatcherList(["{a=1, b=2}", "c=3"]).map((m) => m.name)).toEqual(["a", "b", "c"]);
    expect(parseMatchers("{}")).toEqual([]);
  });
});

describe("matches", () => {
  const labels = { rule: "big-outflow", watch: "treasury", source: "internal_transactions", severity: "critical", team: "treasury" };

  it("needs every matcher to hold; none holds everything", () => {
    expect(matches([], labels)).toBe(true);
    expect(matches(parseMatcherList(["severity=critical", "team=~treas.*"]), labels)).toBe(true);
    expect(matches(parseMatcherList(["severity=critical", "team=ops"]), labels)).toBe(false);
  });

  it('reads a missing label as "" (team="" means no team)', () => {
    const none = { rule: "r", watch: "w", source: "s" };
    expect(matches(parseMatcherList(['team=""']), none)).toBe(true);
    expect(matches(parseMatcherList(['team!=""']), none)).toBe(false);
    expect(matches(parseMatcherList(['team!=""']), labels)).toBe(true);
    expect(matches(parseMatcherList(['team=~".*"']), none)).toBe(true);
    expect(matches(parseMatcherList(["team!=ops"]), none)).toBe(true);
  });

  it("never reads a label from the object's prototype", () => {
    expect(matches(parseMatcherList(['constructor=""', 'toString=""']), {})).toBe(true);
  });
});

describe("labels", () => {
  it("an alert's labels: the rule's own, severity, then rule, watch, source and kind, sorted", () => {
    const labels = alertLabels({ rule: "low-gas", watch: "hot", source: "balances", severity: "warning", labels: { team: "ops", tier: "1" } });
    expect(labels).toEqual({ rule: "low-gas", severity: "warning", source: "balances", team: "ops", tier: "1", watch: "hot" });
    expect(Object.keys(labels)).toEqual(["rule", "severity", "source", "team", "tier", "watch"]);
    expect(formatLabels({ b: "2", a: 'x"y' })).toBe('{a="x\\"y", b="2"}');
  });

  it("names as Alertmanager's, not reserved, not kaiawatch's own; values text", () => {
    expect(labelNameProblem("team")).toBeUndefined();
    expect(labelNameProblem("_x1")).toBeUndefined();
    expect(labelNameProblem("1x")).toMatch(/not a label name/);
    expect(labelNameProblem("a-b")).toMatch(/not a label name/);
    expect(labelNameProblem("__meta")).toMatch(/reserved/);
    expect(labelNameProblem("watch")).toMatch(/set by kaiawatch/);
    expect(labelValueProblem("x")).toBeUndefined();
    expect(labelValueProblem(1)).toMatch(/quote it/);
    expect(labelValueProblem("x".repeat(300))).toMatch(/at most 256/);
  });

  it("an alert queued before labels existed gets them from its fields", () => {
    const base = { rule: "kaiawatch.operational", watch: "kaiawatch", source: "kaiawatch" as const, record: { kind: "source_failing" } };
    expect(labelsOfAlert(base)).toEqual({ kind: "source_failing", rule: "kaiawatch.operational", source: "kaiawatch", watch: "kaiawatch" });
    expect(labelsOfAlert({ ...base, labels: { rule: "x", watch: "w", source: "s" } })).toEqual({ rule: "x", watch: "w", source: "s" });
  });
});
