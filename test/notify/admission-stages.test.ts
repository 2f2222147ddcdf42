import { describe, expect, it } from "vitest";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import type { DispatcherRule } from "../../src/notify/admission.js";
import { cooldownStage } from "../../src/notify/cooldown-stage.js";
import type { CooldownView } from "../../src/notify/cooldown.js";
import { digestStage } from "../../src/notify/digest-stage.js";
import { groupId } from "../../src/notify/grouping.js";
import { buildInhibitRules } from "../../src/notify/inhibit.js";
import { inhibitMuter } from "../../src/notify/inhibit-muter.js";
import { muteStage, type Muter } from "../../src/notify/mute-stage.js";
import { routeGroupOf } from "../../src/notify/route-grouping.js";
import { buildRouteTree } from "../../src/notify/routes.js";
import { planSends } from "../../src/notify/send-plan.js";
import { silenceMuter } from "../../src/notify/silence-muter.js";
import { MUTED_UNTIL, mutedEpisodeEnds, timeIntervalMuter } from "../../src/notify/time-interval-muter.js";
import { parseNamedTimeIntervals } from "../../src/notify/time-intervals.js";
import type { Silence } from "../../src/notify/silences.js";
import { entry } from "./dispatcher-fixtures.js";

// Each of admit()'s stages alone, on plain data; test/notify/admission.test.ts drives them together.
const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

function at(alertId: string, rule: string, createdMs: number, record: unknown = {}, patch: Partial<OutboxEntry> = {}): OutboxEntry {
  return { ...entry(alertId, "out", rule, { record, createdAt: iso(createdMs) }), ...patch };
}

function withAlert(base: OutboxEntry, alert: Partial<OutboxEntry["alert"]>): OutboxEntry {
  return { ...base, alert: { ...base.alert, ...alert } };
}

const silence = (rule: string, match: Record<string, string>, expiresMs = NOW + 3600_000): Silence => ({
  id: "sil_00000001",
  rule,
  match,
  reason: "maintenance",
  created_at: iso(NOW - 1000),
  expires_at: iso(expiresMs),
});

describe("the mute stage", () => {
  const always = (name: string, calls: string[]): Muter => ({
    mutes() {
      calls.push(name);
      return { reason: name === "silence" ? "silence" : "inhibited" };
    },
  });

  it("asks its muters in order and stops at the first that mutes", () => {
    const calls: string[] = [];
    const never: Muter = { mutes: () => (calls.push("never"), undefined) };
    expect(muteStage([never, always("silence", calls), always("inhibit", calls)])(at("a1", "r", NOW), NOW)).toEqual({ reason: "silence" });
    expect(calls).toEqual(["never", "silence"]);
  });

  it("never holds a retry: a mute is decided before the first attempt", () => {
    const calls: string[] = [];
    expect(muteStage([always("silence", calls)])(at("a1", "r", NOW, {}, { attempts: 1 }), NOW)).toBeUndefined();
    expect(calls).toEqual([]);
  });
});

describe("the silence muter", () => {
  it("holds an alert of the silence's rule whose record matches, naming the silence, while it is active", () => {
    const muter = silenceMuter([silence("r", { from: "0xaa" })]);
    expect(muter.mutes(at("a1", "r", NOW, { from: "0xAA" }), NOW)).toEqual({ reason: "silence", silenceId: "sil_00000001" });
    expect(muter.mutes(at("a2", "r", NOW, { from: "0xbb" }), NOW)).toBeUndefined();
    expect(muter.mutes(at("a3", "other", NOW, { from: "0xaa" }), NOW)).toBeUndefined();
    expect(muter.mutes(at("a1", "r", NOW, { from: "0xaa" }), NOW + 3600_000)).toBeUndefined();
  });
});

describe("the inhibition muter", () => {
  const rules = buildInhibitRules([{ source_matchers: ['severity="critical"'], target_matchers: ['severity="warning"'], equal: ["watch"] }]);
  const firing = [{ id: "ep_crit", labels: { rule: "low", watch: "w", source: "balances", severity: "critical" } }];
  const warning = (id: string, watch: string) => withAlert(at(id, "low", NOW), { watch, labels: { rule: "low", watch, source: "balances", severity: "warning" } });

  it("holds a target while a source of the same watch fires, naming the rule and the source", () => {
    const muter = inhibitMuter(rules, firing);
    expect(muter.mutes(warning("a1", "w"), NOW)).toEqual({ reason: "inhibited", inhibition: { rule: "inhibit_rules[0]", source: "ep_crit" } });
    expect(muter.mutes(warning("a2", "other"), NOW)).toBeUndefined();
    expect(inhibitMuter(rules, []).mutes(warning("a1", "w"), NOW)).toBeUndefined();
  });

  it("never holds a resolve", () => {
    expect(inhibitMuter(rules, firing).mutes(withAlert(warning("a1", "w"), { status: "resolved" }), NOW)).toBeUndefined();
  });
});

describe("the time interval muter", () => {
  const routes = buildRouteTree(
    { receiver: "out", routes: [{ matchers: ['severity="warning"'], receiver: "chat", mute_time_intervals: ["weekend"] }] },
    parseNamedTimeIntervals([{ name: "weekend", time_intervals: [{ weekdays: ["saturday", "sunday"] }] }]),
  );
  const saturday = Date.parse("2026-03-28T12:00:00Z");
  const warning = (sink: string) => withAlert({ ...at("a1", "low", NOW), id: `a1:${sink}`, sink }, { labels: { rule: "low", watch: "w", source: "balances", severity: "warning" } });
  const rules = new Map([["low", { routed: true }]]);

  it("holds an alert on the sink of a muted route, naming the route and the interval", () => {
    expect(timeIntervalMuter(routes, rules).mutes(warning("chat"), saturday)).toEqual({
      reason: "muted",
      timeInterval: { route: "routes.routes[0]", interval: "weekend", why: 'is in mute time interval "weekend"' },
    });
    expect(timeIntervalMuter(routes, rules).mutes(warning("chat"), Date.parse("2026-03-30T12:00:00Z"))).toBeUndefined();
  });

  it("leaves alone what the tree did not send there: a rule with notify:, another sink, no tree", () => {
    expect(timeIntervalMuter(routes, new Map([["low", { routed: false }]])).mutes(warning("chat"), saturday)).toBeUndefined();
    expect(timeIntervalMuter(routes, rules).mutes(warning("out"), saturday)).toBeUndefined();
    expect(timeIntervalMuter(undefined, rules).mutes(warning("chat"), saturday)).toBeUndefined();
  });
});

describe("episodes that began and ended inside a mute", () => {
  const routes = buildRouteTree(
    { receiver: "out", routes: [{ matchers: ['severity="warning"'], receiver: "chat", mute_time_intervals: ["weekend"] }] },
    parseNamedTimeIntervals([{ name: "weekend", time_intervals: [{ weekdays: ["saturday", "sunday"] }] }]),
  );
  const rules = new Map([["low", { routed: true }]]);
  const labels = { rule: "low", watch: "w", source: "balances", severity: "warning" };
  const episode = (id: string, status: "firing" | "resolved", lastError?: string) =>
    withAlert({ ...at(id, "low", NOW), id: `${id}:chat`, sink: "chat", ...(lastError === undefined ? {} : { last_error: lastError }) }, { labels, episode_id: "ep1", status });

  it("drops the first alert and its resolve when a mute made one of them wait; a reminder alone beside the resolve", () => {
    const waited = `${MUTED_UNTIL}${iso(NOW)}: routes.routes[0] is in mute time interval "weekend"`;
    expect([...mutedEpisodeEnds([episode("ep1", "firing", waited), episode("ep1:resolved", "resolved", waited)], routes, rules, NOW).keys()]).toEqual(["ep1:chat", "ep1:resolved:chat"]);
    expect([...mutedEpisodeEnds([episode("ep1:repeat:1", "firing", waited), episode("ep1:resolved", "resolved", waited)], routes, rules, NOW).keys()]).toEqual(["ep1:repeat:1:chat"]);
  });

  it("leaves alone a pair no mute held (both simply due in one pass), and one not due yet", () => {
    expect(mutedEpisodeEnds([episode("ep1", "firing"), episode("ep1:resolved", "resolved")], routes, rules, NOW).size).toBe(0);
    const later = { ...episode("ep1", "firing", "muted until later"), next_attempt_at: iso(NOW + 1000) };
    expect(mutedEpisodeEnds([later, episode("ep1:resolved", "resolved", "muted until later")], routes, rules, NOW).size).toBe(0);
  });
});

describe("the cooldown stage", () => {
  const running = (stampedAt: number): CooldownView => ({ isActive: (_sink, _rule, _key, ms, now) => now - stampedAt < ms });
  const idle: CooldownView = { isActive: () => false };
  const rule: DispatcherRule = { name: "r", cooldownMs: 60_000, cooldownKey: "from" };

  it("lets the first alert of a key through and starts its cooldown; the next of the pass is held", () => {
    const stage = cooldownStage("out", idle);
    expect(stage.holds(rule, at("a1", "r", NOW, { from: "0xaa" }), true, NOW)).toBe(false);
    expect(stage.holds(rule, at("a2", "r", NOW, { from: "0xaa" }), true, NOW)).toBe(true);
    expect(stage.holds(rule, at("a3", "r", NOW, { from: "0xbb" }), true, NOW)).toBe(false);
    expect(stage.starts).toEqual([
      { rule: "r", key: "0xaa", entryId: "a1:out" },
      { rule: "r", key: "0xbb", entryId: "a3:out" },
    ]);
  });

  it("holds while a stored cooldown runs; a digest's member starts none; a resolve and a retry are never held", () => {
    const stage = cooldownStage("out", running(NOW - 1000));
    expect(stage.holds(rule, at("a1", "r", NOW), true, NOW)).toBe(true);
    expect(stage.holds(rule, withAlert(at("a2", "r", NOW), { status: "resolved" }), true, NOW)).toBe(false);
    expect(stage.holds(rule, at("a3", "r", NOW, {}, { attempts: 1 }), true, NOW)).toBe(false);
    const member = cooldownStage("out", idle);
    expect(member.holds(rule, at("a4", "r", NOW), false, NOW)).toBe(false);
    expect(member.starts).toEqual([]);
    expect(cooldownStage("out", running(NOW)).holds({ name: "r" }, at("a5", "r", NOW), true, NOW)).toBe(false);
  });
});

describe("the digest stage", () => {
  it("gathers a rule's group: per `by` value and closes it at the end of its window, with its cooldown keys", () => {
    const rule: DispatcherRule = { name: "mint", group: { windowMs: 10_000, max: 100, by: "to" }, cooldownMs: 60_000, cooldownKey: "to" };
    const stage = digestStage(new Map([["mint", rule]]), undefined);
    const due = [at("m1", "mint", NOW - 4000, { to: "0x1" }), at("m2", "mint", NOW - 3000, { to: "0x2" }), at("m3", "mint", NOW - 2000, { to: "0x1" })];
    for (const e of due) expect(stage.join(e, rule, undefined)).toBe(true);
    expect(stage.join(at("x", "r", NOW), { name: "r" }, undefined)).toBe(false);
    const open = stage.close(NOW, false);
    expect(open.closedDigests).toEqual([]);
    expect(open.readyAt).toBe(NOW - 4000 + 10_000);
    const closed = stage.close(NOW + 7000, false);
    expect(closed.closedDigests.map((d) => [d.group.id, d.stamps])).toEqual([
      [groupId(["m1:out", "m3:out"]), [{ rule: "mint", key: "0x1" }]],
      [groupId(["m2:out"]), [{ rule: "mint", key: "0x2" }]],
    ]);
  });

  it("sends a route's group of one as that alert, starting its group's interval", () => {
    const routes = buildRouteTree({ receiver: "out", group_by: ["rule"], group_wait: 0 });
    const rule: DispatcherRule = { name: "r", routed: true };
    const only = at("a1", "r", NOW - 1000);
    const group = routeGroupOf(routes, rule, only, "out");
    const stage = digestStage(new Map([["r", rule]]), undefined);
    expect(stage.join(only, rule, group)).toBe(true);
    const closed = stage.close(NOW, false);
    expect(closed.closedDigests).toEqual([]);
    expect(closed.singles.map((e) => e.id)).toEqual(["a1:out"]);
    expect(closed.cooldownStarts).toEqual([{ rule: "route:routes", key: '{rule="r"}', entryId: "a1:out" }]);
  });
});

describe("the send plan", () => {
  it("orders digests and singles by their first entry, and waits for a digest's last backoff", () => {
    const due = [at("m1", "mint", NOW - 3000), at("a1", "r", NOW - 2000), at("m2", "mint", NOW - 1000)];
    const waits: number[] = [];
    const ready = new Map([["grp_1", [due[0] as OutboxEntry, due[2] as OutboxEntry]]]);
    expect(planSends(due, ready, [due[1] as OutboxEntry], NOW, (t) => waits.push(t)).map((s) => s.id)).toEqual(["grp_1", "a1"]);
    const backingOff = new Map([["grp_1", [due[0] as OutboxEntry, { ...(due[2] as OutboxEntry), next_attempt_at: iso(NOW + 500) }]]]);
    expect(planSends(due, backingOff, [], NOW, (t) => waits.push(t))).toEqual([]);
    expect(waits).toEqual([NOW + 500]);
  });
});
