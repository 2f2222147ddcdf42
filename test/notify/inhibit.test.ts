import { describe, expect, it } from "vitest";
import { admit, type AdmissionInput } from "../../src/notify/admission.js";
import { buildInhibitRules, inhibitionOf, type FiringSource } from "../../src/notify/inhibit.js";
import { alertLabels, type Labels } from "../../src/notify/labels.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { configFromText } from "../helpers/harness.js";
import { entry } from "./dispatcher-fixtures.js";

// Plain data only: inhibition's matching (Alertmanager's inhibit_rules) and admission's hold.
const NOW = Date.parse("2026-01-01T12:00:00.000Z");

const labels = (rule: string, watch: string, severity: string): Labels => alertLabels({ rule, watch, source: "balances", severity });
const source = (id: string, l: Labels): FiringSource => ({ id, labels: l });

/** The example: a critical mutes the warning of the same wallet. */
const criticalMutesWarning = buildInhibitRules([{ source_matchers: ['severity="critical"'], target_matchers: ['severity="warning"'], equal: ["watch"] }]);

describe("inhibition's matching", () => {
  it("a critical mutes the warning of the same watch, not another watch's, with equal: [watch]", () => {
    const critical = source("kw_crit", labels("payer-empty", "payer", "critical"));
    const held = inhibitionOf(criticalMutesWarning, [critical], labels("payer-low", "payer", "warning"));
    expect(held?.rule.id).toBe("inhibit_rules[0]");
    expect(held?.source.id).toBe("kw_crit");
    // Another wallet's warning: the watch differs.
    expect(inhibitionOf(criticalMutesWarning, [critical], labels("hot-low", "hot", "warning"))).toBeUndefined();
    // Not a target: a critical is not held by another critical, nor an info by a critical.
    expect(inhibitionOf(criticalMutesWarning, [critical], labels("payer-other", "payer", "critical"))).toBeUndefined();
    expect(inhibitionOf(criticalMutesWarning, [critical], labels("payer-note", "payer", "info"))).toBeUndefined();
    // No source firing: nothing held.
    expect(inhibitionOf(criticalMutesWarning, [], labels("payer-low", "payer", "warning"))).toBeUndefined();
  });

  it("counts a label missing on both sides as equal, and one missing on one side as different (Alertmanager's empty value)", () => {
    const rules = buildInhibitRules([{ source_matchers: ['kind="source_failing"'], target_matchers: ["source!=kaiawatch"], equal: ["watch", "team"] }]);
    const failing = source("kw_op", alertLabels({ rule: "kaiawatch.operational", watch: "payer", source: "kaiawatch", kind: "source_failing" }));
    expect(inhibitionOf(rules, [failing], alertLabels({ rule: "moves", watch: "payer", source: "internal_transactions" }))?.source.id).toBe("kw_op");
    expect(inhibitionOf(rules, [failing], alertLabels({ rule: "moves", watch: "payer", source: "internal_transactions", labels: { team: "ops" } }))).toBeUndefined();
  });

  it("never lets an alert inhibit itself, nor two alerts matching both sides of a rule mute each other", () => {
    const rules = buildInhibitRules([{ source_matchers: ["severity=~\"warning|critical\""], target_matchers: ['severity=~"warning|critical"'], equal: ["watch"] }]);
    const a = source("kw_a", labels("payer-a", "payer", "warning"));
    const b = source("kw_b", labels("payer-b", "payer", "critical"));
    expect(inhibitionOf(rules, [a], a.labels, "kw_a")).toBeUndefined();
    expect(inhibitionOf(rules, [a, b], a.labels, "kw_a")).toBeUndefined();
  });
});

describe("inhibition in admission", () => {
  const warning = (id: string, patch: Partial<OutboxEntry["alert"]> = {}): OutboxEntry => {
    const e = entry(id, "out", "payer-low", { createdAt: new Date(NOW - 1000).toISOString() });
    return { ...e, alert: { ...e.alert, watch: "payer", source: "balances", severity: "warning", labels: labels("payer-low", "payer", "warning"), ...patch } };
  };
  const base = (due: OutboxEntry[], firing: FiringSource[]): AdmissionInput => ({
    sink: "out",
    due,
    inFlight: new Set(),
    rules: new Map([["payer-low", { name: "payer-low" }]]),
    silences: [],
    cooldown: { isActive: () => false },
    flushGroups: false,
    now: NOW,
    inhibitRules: criticalMutesWarning,
    firing,
  });
  const critical = source("kw_crit", labels("payer-empty", "payer", "critical"));

  it("holds back a firing alert while its source fires, recorded as inhibited with the rule and the source, and lets it through once the source is gone", () => {
    const held = admit(base([warning("w1")], [critical]));
    expect(held.sends).toEqual([]);
    expect(held.held.map((h) => [h.entry.id, h.reason, h.inhibition])).toEqual([["w1:out", "inhibited", { rule: "inhibit_rules[0]", source: "kw_crit" }]]);
    const released = admit(base([warning("w2")], []));
    expect(released.held).toEqual([]);
    expect(released.sends.map((s) => s.id)).toEqual(["w2"]);
  });

  it("never holds a resolve (it closes an incident the receiver may know of), nor a retry (decided once, before the first attempt)", () => {
    const resolved = admit(base([warning("w1:resolved", { status: "resolved" })], [critical]));
    expect(resolved.sends.map((s) => s.id)).toEqual(["w1:resolved"]);
    const retry = admit(base([{ ...warning("w3"), attempts: 1 }], [critical]));
    expect(retry.sends.map((s) => s.id)).toEqual(["w3"]);
  });
});

describe("inhibit_rules in the config", () => {
  const text = (rules: string) => `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
watches:
  - { name: wallet, balance: ["0x00000000000000000000000000000000000fee00"] }
rules:
  - { name: low, watch: wallet, notify: [out], when: { balance: { lt: "1 KAIA" } } }
sinks:
  out: { type: console }
inhibit_rules:
${rules}
`;

  it("reads Alertmanager's keys", () => {
    const config = configFromText(text(`  - source_matchers: ['severity="critical"']\n    target_matchers: ['severity="warning"']\n    equal: [watch]`));
    expect(config.inhibit_rules.map((r) => [r.id, r.sourceMatchers.map(String), r.targetMatchers.map(String), r.equal])).toEqual([["inhibit_rules[0]", ['severity="critical"'], ['severity="warning"'], ["watch"]]]);
  });

  it("refuses a bad matcher, a bad label name, a missing side and an unknown key, each with its key path and line", () => {
    const bad = text(
      [
        `  - source_matchers: ['severity=="critical"']`,
        `    target_matchers: ['severity="warning"']`,
        `  - source_matchers: ['kind="source_failing"']`,
        `    target_matchers: ['watch=~"("']`,
        `    equal: [bad-name]`,
        `  - target_matchers: ['severity="warning"']`,
        `    equals: [watch]`,
      ].join("\n"),
    );
    let message = "";
    try {
      configFromText(bad);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("5 errors in the configuration");
    expect(message).toContain('test.yaml:11:23 inhibit_rules[0].source_matchers[0]: matcher value contains unescaped double quote: ="critical"');
    expect(message).toContain("test.yaml:14:23 inhibit_rules[1].target_matchers[0]: ");
    expect(message).toContain("error parsing regexp: missing closing ): `^(?:()$`");
    expect(message).toContain('test.yaml:15:13 inhibit_rules[1].equal[0]: not a label name');
    expect(message).toContain("test.yaml:16:5 inhibit_rules[2].source_matchers: required");
    expect(message).toContain('test.yaml:17:5 inhibit_rules[2].equals: unknown key (did you mean "equal"?)');
  });
});
