import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { admit } from "../../src/notify/admission.js";
import { applyAdmission } from "../../src/notify/apply-admission.js";
import { readCooldownView } from "../../src/notify/cooldown.js";
import { requeueDeadLetters } from "../../src/notify/dead-letters.js";
import { createOutboxMaintenance } from "../../src/notify/outbox-maintenance.js";
import { createWorker, isIdle, runWorker } from "../../src/notify/sink-worker.js";
import { commit, counter, createEnv, entry, recording, type TestEnv } from "./dispatcher-fixtures.js";

/**
 * The dispatcher's parts, each alone (dispatcher.ts wires them; dispatcher*.test.ts test the
 * whole): the worker loop, the application of admission's decisions, the outbox's upkeep and
 * dead letters.
 */
const HOUR = 3_600_000;
let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env?.cleanup(); // none when the test made none (shuffled, a test without one may run first)
});

const worker = (name = "out") => createWorker({ sink: recording(name), concurrency: 1, maxAttempts: 3, maxAgeMs: HOUR }, env.common.logger);

describe("the worker loop (runWorker)", () => {
  it("passes while it holds the sink, stands by without one (abandoning its sends), and stops with its signal", async () => {
    const w = worker();
    let owned = false;
    const passes: number[] = [];
    const controller = new AbortController();
    const send = new AbortController();
    w.sendControllers.add(send);
    const loop = runWorker(
      w,
      {
        now: env.common.now,
        idlePollMs: 60_000,
        owns: () => owned,
        pass: async () => {
          passes.push(passes.length);
          // The third pass ends the loop: the abort is what a stop does.
          if (passes.length === 3) controller.abort();
          return undefined;
        },
      },
      controller.signal,
    );
    // Not the holder: no pass; a send in flight is abandoned, and the worker sleeps until woken.
    await new Promise((resolve) => setImmediate(resolve));
    expect(passes).toEqual([]);
    expect(send.signal.aborted).toBe(true);
    expect(isIdle(w, env.common.now())).toBe(true);

    owned = true;
    w.waker.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(passes).toEqual([0]);
    // A wake-up (a kick, a finished send) runs the next pass at once, not after the idle poll.
    w.waker.wake();
    await new Promise((resolve) => setImmediate(resolve));
    w.waker.wake();
    await loop;
    expect(passes).toEqual([0, 1, 2]);
  });

  it("reports a failing pass and tries again at the next idle poll", async () => {
    const w = worker();
    const controller = new AbortController();
    let calls = 0;
    await runWorker(
      w,
      {
        now: env.common.now,
        idlePollMs: 0,
        owns: () => true,
        pass: async () => {
          calls += 1;
          if (calls === 2) controller.abort();
          throw new Error("store down");
        },
      },
      controller.signal,
    );
    expect(calls).toBe(2);
    expect(env.logLines.some((line) => line.includes("dispatcher pass failed; trying again"))).toBe(true);
  });
});

describe("applying admission (applyAdmission)", () => {
  it("marks held-back entries delivered with a note, durably groups a digest and stamps the cooldowns its sends start", async () => {
    await env.store.silences.add({ id: "sil_00000001", rule: "r", match: {}, reason: "x", created_at: new Date(env.common.now()).toISOString(), expires_at: new Date(env.common.now() + HOUR).toISOString() });
    await commit(env.store, [entry("a1", "out", "r"), entry("b1", "out", "cooled"), entry("b2", "out", "cooled"), entry("g1", "out", "grouped"), entry("g2", "out", "grouped")]);
    const now = env.common.now();
    const due = await env.store.listOutbox({ sink: "out", state: "pending" });
    const rules = new Map([
      ["r", { name: "r" }],
      ["cooled", { name: "cooled", cooldownMs: HOUR }],
      ["grouped", { name: "grouped", group: { windowMs: 0, max: 10 } }],
    ]);
    const admission = admit({ sink: "out", due, inFlight: new Set(), rules, silences: await env.store.silences.active(now), cooldown: await readCooldownView(env.store, "out", due, rules), flushGroups: true, now });
    const noted: string[][] = [];
    const held = await applyAdmission({ store: env.store, common: env.common, silences: { noteHeld: (ids) => noted.push([...ids]) }, logger: env.common.logger }, "out", admission, now);

    expect(held).toBe(2); // a1 (silenced) and b2 (the cooldown b1 starts)
    expect(noted).toEqual([["sil_00000001"]]);
    expect(await env.store.suppressions(["a1:out", "b2:out"])).toEqual({ "a1:out": { at: new Date(now).toISOString(), reason: "silence" }, "b2:out": { at: new Date(now).toISOString(), reason: "cooldown" } });
    expect(await counter(env.common, "alertsSuppressed", { reason: "silence" })).toBe(1);
    // Each hold is an attempt in the delivery history, written with it.
    expect((await env.store.listAttempts({ outcome: "suppressed" })).map((a) => [a.alert_id, a.attempt, a.error]).sort()).toEqual([
      ["a1", 1, "held back by a silence"],
      ["b2", 1, "held back by a cooldown"],
    ]);
    const grouped = await env.store.listOutbox({ sink: "out", state: "pending" });
    expect(new Set(grouped.filter((e) => e.rule === "grouped").map((e) => e.group_id)).size).toBe(1);
    expect(grouped.find((e) => e.rule === "grouped")?.group_id).toBeDefined();
    expect(await env.store.readCooldowns("out", [{ rule: "cooled", key: "" }])).toEqual([{ sink: "out", rule: "cooled", key: "", at: now, entryId: "b1:out" }]);
  });
});

describe("the outbox's upkeep (createOutboxMaintenance)", () => {
  it("prunes deliveries past retention in batches and stale stamps, sets the gauges, and warns once of an unknown sink", async () => {
    await commit(env.store, [entry("a1", "out"), entry("a2", "out"), entry("a3", "out"), entry("x1", "gone"), entry("d1", "out")]);
    const old = new Date(env.common.now() - 2 * HOUR).toISOString();
    await env.store.updateOutbox([
      { id: "a1:out", kind: "delivered", at: old, history: { delivery_id: "a1", attempt: 1 } },
      { id: "a2:out", kind: "delivered", at: old, history: { delivery_id: "a2", attempt: 1 } },
      { id: "d1:out", kind: "dead", at: old, reason: "410", history: { delivery_id: "d1", attempt: 1, status: 410 } },
      { id: "x1:gone", kind: "failed", at: new Date(env.common.now()).toISOString(), error: "503", next_attempt_at: new Date(env.common.now() + HOUR).toISOString(), history: { delivery_id: "x1", attempt: 1, status: 503 } },
    ]);
    await env.store.writeCooldowns([{ sink: "out", rule: "r", key: "", at: env.common.now() - 3 * HOUR }]);
    const maintenance = createOutboxMaintenance(env.common, { store: env.store, sinks: ["out"], retentionMs: HOUR, pruneBatch: 1, pruneIntervalMs: 60_000, longestCooldownMs: HOUR, logger: env.common.logger });

    expect(await maintenance.prune()).toBe(2);
    expect((await env.store.listOutbox()).map((e) => e.id)).toEqual(["a3:out", "x1:gone", "d1:out"]);
    expect(await env.store.readCooldowns("out", [{ rule: "r", key: "" }])).toEqual([]);
    // The delivery history past retention goes too, in the same batches (a dead letter's old attempt with it).
    expect((await env.store.listAttempts()).map((a) => a.alert_id)).toEqual(["x1"]);
    await maintenance.updateGauges("out");
    expect(await counter(env.common, "outboxPending", { sink: "out", state: "pending" })).toBe(1);
    expect(await maintenance.countDead("out")).toBe(1);

    const controller = new AbortController();
    const loop = maintenance.run(controller.signal);
    controller.abort();
    await loop;
    expect(env.logLines.filter((line) => line.includes("pending alerts for a sink that is not configured"))).toHaveLength(1);
  });
});

describe("dead letters (requeueDeadLetters)", () => {
  it("requeue by entry, alert or digest id, or all; names the ids that matched none", async () => {
    await commit(env.store, [entry("a1", "out"), entry("a1", "mail"), entry("a2", "out"), entry("a3", "out")]);
    const at = new Date(env.common.now()).toISOString();
    await env.store.updateOutbox([
      { id: "a3:out", kind: "group", group_id: "grp_1" },
      ...["a1:out", "a1:mail", "a2:out", "a3:out"].map((id) => ({ id, kind: "dead" as const, at, reason: "x" })),
    ]);
    expect(await requeueDeadLetters(env.store, { ids: ["a1", "grp_1", "nope"] }, env.common.now())).toEqual({ requeued: 3, unmatched: ["nope"] });
    expect((await env.store.listOutbox({ state: "dead" })).map((e) => e.id)).toEqual(["a2:out"]);
    expect((await env.store.listOutbox({ state: "pending" })).find((e) => e.id === "a3:out")?.group_id).toBeUndefined();
    expect(await requeueDeadLetters(env.store, { all: true }, env.common.now())).toEqual({ requeued: 1, unmatched: [] });
  });
});
