import { describe, expect, it } from "vitest";
import { admit, type AdmissionInput, type CooldownView, type DispatcherRule } from "../../src/notify/admission.js";
import { groupId } from "../../src/notify/grouping.js";
import type { Silence } from "../../src/notify/silences.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { admissionInput, entry } from "./dispatcher-fixtures.js";

// Plain data only: no store, no timers, no clock. `now` is a fixed instant.
const NOW = Date.parse("2026-01-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

function at(alertId: string, rule: string, createdMs: number, record: unknown = {}, patch: Partial<OutboxEntry> = {}): OutboxEntry {
  return { ...entry(alertId, "out", rule, { record, createdAt: iso(createdMs) }), ...patch };
}

/** Cooldown stamps as plain data: `rule\0key` → ms, and `rule\0key` → the entry that started the stamp (let through before a crash). */
function cooldownOf(stamps: Record<string, number> = {}, startedBy: Record<string, string> = {}): CooldownView {
  return {
    isActive: (_sink, rule, key, cooldownMs, now, entryId) => {
      const stamp = stamps[`${rule}\u0000${key}`];
      return stamp !== undefined && startedBy[`${rule}\u0000${key}`] !== entryId && now - stamp < cooldownMs;
    },
  };
}

function input(due: OutboxEntry[], rules: DispatcherRule[], overrides: Partial<AdmissionInput> = {}): AdmissionInput {
  return admissionInput(due, rules, NOW, { cooldown: cooldownOf(), ...overrides });
}

const silence = (rule: string, match: Record<string, string>, expiresMs = NOW + 3600_000): Silence => ({
  id: "sil_00000001",
  rule,
  match,
  reason: "maintenance",
  created_at: iso(NOW - 1000),
  expires_at: iso(expiresMs),
});

describe("admission", () => {
  it("sends single alerts in outbox order under their alert id", () => {
    const due = [at("a1", "r", NOW - 3000), at("a2", "r", NOW - 2000)];
    const result = admit(input(due, [{ name: "r" }]));
    expect(result.sends.map((send) => [send.id, send.entries.map((e) => e.id)])).toEqual([
      ["a1", ["a1:out"]],
      ["a2", ["a2:out"]],
    ]);
    expect(result.held).toEqual([]);
    expect(result.nextAt).toBeUndefined();
  });

  it("holds an alert an active silence matches, and names the silence", () => {
    const due = [at("a1", "r", NOW - 1000, { from: "0xAA" }), at("a2", "r", NOW - 1000, { from: "0xbb" })];
    const result = admit(input(due, [{ name: "r" }], { silences: [silence("r", { from: "0xaa" })] }));
    expect(result.held.map((h) => [h.entry.id, h.reason, h.silenceId])).toEqual([["a1:out", "silence", "sil_00000001"]]);
    expect(result.sends.map((send) => send.id)).toEqual(["a2"]);
  });

  it("ignores an expired silence, and never holds a retry", () => {
    const expired = silence("r", {}, NOW - 1);
    expect(admit(input([at("a1", "r", NOW - 1000)], [{ name: "r" }], { silences: [expired] })).held).toEqual([]);
    const retry = at("a2", "r", NOW - 1000, {}, { attempts: 1 });
    expect(admit(input([retry], [{ name: "r" }], { silences: [silence("r", {})] })).sends.map((s) => s.id)).toEqual(["a2"]);
  });

  it("lets the first alert of a cooldown key through, holds the rest of the batch and starts the cooldown", () => {
    const rule: DispatcherRule = { name: "r", cooldownMs: 60_000, cooldownKey: "from" };
    const due = [at("a1", "r", NOW - 3000, { from: "0xaa" }), at("a2", "r", NOW - 2000, { from: "0xaa" }), at("a3", "r", NOW - 1000, { from: "0xbb" })];
    const result = admit(input(due, [rule]));
    expect(result.sends.map((s) => s.id)).toEqual(["a1", "a3"]);
    expect(result.held.map((h) => [h.entry.id, h.reason])).toEqual([["a2:out", "cooldown"]]);
    expect(result.cooldownStarts).toEqual([
      { rule: "r", key: "0xaa", entryId: "a1:out" },
      { rule: "r", key: "0xbb", entryId: "a3:out" },
    ]);
  });

  it("holds by a running cooldown until it ends, except an alert admitted before a crash", () => {
    const rule: DispatcherRule = { name: "r", cooldownMs: 60_000 };
    const due = [at("a1", "r", NOW - 2000), at("a2", "r", NOW - 1000)];
    const running = cooldownOf({ "r\u0000": NOW - 59_999 }, { "r\u0000": "a2:out" });
    const result = admit(input(due, [rule], { cooldown: running }));
    expect(result.held.map((h) => h.entry.id)).toEqual(["a1:out"]);
    expect(result.sends.map((s) => s.id)).toEqual(["a2"]);
    const ended = cooldownOf({ "r\u0000": NOW - 60_000 });
    expect(admit(input(due.slice(0, 1), [rule], { cooldown: ended })).sends.map((s) => s.id)).toEqual(["a1"]);
  });

  it("never holds a resolved alert by the cooldown its firing alert started, nor starts one with it", () => {
    const rule: DispatcherRule = { name: "r", cooldownMs: 60_000 };
    const firing = at("ep1", "r", NOW - 2000);
    firing.alert = { ...firing.alert, status: "firing" };
    const resolved = at("ep1:resolved", "r", NOW - 1000);
    resolved.alert = { ...resolved.alert, status: "resolved" };
    const running = cooldownOf({ "r\u0000": NOW - 1000 });
    const result = admit(input([resolved], [rule], { cooldown: running }));
    expect(result.sends.map((s) => s.id)).toEqual(["ep1:resolved"]);
    expect(result.held).toEqual([]);
    expect(result.cooldownStarts).toEqual([]);
    // In one batch: the firing alert starts the cooldown, the resolved alert still goes.
    const batch = admit(input([firing, resolved], [rule]));
    expect(batch.sends.map((s) => s.id)).toEqual(["ep1", "ep1:resolved"]);
    expect(batch.cooldownStarts.map((c) => c.entryId)).toEqual(["ep1:out"]);
  });

  it("keeps a digest open until its window ends, then closes it and starts the cooldown of its keys", () => {
    const rule: DispatcherRule = { name: "mint", group: { windowMs: 10_000, max: 100 }, cooldownMs: 60_000, cooldownKey: "to" };
    const due = [at("m1", "mint", NOW - 4000, { to: "0x1" }), at("m2", "mint", NOW - 3000, { to: "0x2" }), at("m3", "mint", NOW - 2000, { to: "0x1" })];
    const open = admit(input(due, [rule]));
    expect(open.sends).toEqual([]);
    expect(open.closedDigests).toEqual([]);
    expect(open.nextAt).toBe(NOW - 4000 + 10_000);

    const closed = admit(input(due, [rule], { now: NOW + 6000 }));
    const id = groupId(["m1:out", "m2:out", "m3:out"]);
    expect(closed.sends.map((s) => [s.id, s.entries.length])).toEqual([[id, 3]]);
    expect(closed.closedDigests.map((d) => [d.group.id, d.rule, d.stamps])).toEqual([[id, "mint", [{ rule: "mint", key: "0x1" }, { rule: "mint", key: "0x2" }]]]);
    // A digest starts its cooldown when it closes, not per member.
    expect(closed.cooldownStarts).toEqual([]);
    expect(admit(input(due, [rule], { flushGroups: true })).sends.map((s) => s.id)).toEqual([id]);
  });

  it("splits digests by `group.by` and closes a full one at once", () => {
    const rule: DispatcherRule = { name: "mint", group: { windowMs: 10_000, max: 2, by: "to" } };
    const due = [at("m1", "mint", NOW - 3000, { to: "0x1" }), at("m2", "mint", NOW - 2000, { to: "0x2" }), at("m3", "mint", NOW - 1000, { to: "0x1" })];
    const result = admit(input(due, [rule]));
    expect(result.sends.map((s) => s.entries.map((e) => e.id))).toEqual([["m1:out", "m3:out"]]);
    expect(result.nextAt).toBe(NOW - 2000 + 10_000);
  });

  it("sends a persisted digest whole once its last member is due, whatever the rule says now", () => {
    const members = [at("g1", "gone", NOW - 5000, {}, { group_id: "grp_x" }), at("g2", "gone", NOW - 4000, { }, { group_id: "grp_x", next_attempt_at: iso(NOW + 500) })];
    const waiting = admit(input(members, []));
    expect(waiting.sends).toEqual([]);
    expect(waiting.nextAt).toBe(NOW + 500);
    expect(admit(input(members, [], { now: NOW + 500 })).sends.map((s) => [s.id, s.entries.length])).toEqual([["grp_x", 2]]);
  });

  it("skips entries in flight and reports the end of a backoff", () => {
    const due = [at("a1", "r", NOW - 2000), at("a2", "r", NOW - 1000, {}, { attempts: 1, next_attempt_at: iso(NOW + 250) })];
    const result = admit(input(due, [{ name: "r" }], { inFlight: new Set(["a1:out"]) }));
    expect(result.sends).toEqual([]);
    expect(result.nextAt).toBe(NOW + 250);
  });

  it("orders digests and singles together by their first entry", () => {
    const rules: DispatcherRule[] = [{ name: "r" }, { name: "mint", group: { windowMs: 0, max: 10 } }];
    const due = [at("m1", "mint", NOW - 3000), at("a1", "r", NOW - 2000), at("m2", "mint", NOW - 1000)];
    const result = admit(input(due, rules));
    expect(result.sends.map((s) => s.entries.map((e) => e.id))).toEqual([["m1:out", "m2:out"], ["a1:out"]]);
  });
});
