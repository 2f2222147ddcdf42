import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSuppressedNotes } from "../../src/notify/cooldown.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { buildRouteTree } from "../../src/notify/routes.js";
import { parseNamedTimeIntervals } from "../../src/notify/time-intervals.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import { commit, counter, createEnv, entry, recording, type TestEnv } from "./dispatcher-fixtures.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env.cleanup();
});

/** Puts the env's clock at the next `weekday` (0 = Sunday) at `hour` UTC after the real now: entries made now are due then. */
function clockAt(weekday: number, hour: number): number {
  const real = Date.now();
  const day = new Date(real + 2 * DAY);
  day.setUTCHours(hour, 0, 0, 0);
  while (day.getUTCDay() !== weekday) day.setTime(day.getTime() + DAY);
  env.clock.offsetMs = day.getTime() - real;
  return day.getTime();
}

const intervals = parseNamedTimeIntervals([{ name: "weekend", time_intervals: [{ weekdays: ["saturday", "sunday"] }] }]);
const routes = buildRouteTree(
  {
    receiver: "ops",
    group_wait: 0,
    routes: [
      { matchers: ['severity="warning"'], receiver: "chat", mute_time_intervals: ["weekend"] },
      { matchers: ['severity=~"warning|critical"'], receiver: "pager" },
    ],
  },
  intervals,
);

function warning(id: string, sink: string): OutboxEntry {
  const base = entry(id, sink, "low");
  return { ...base, alert: { ...base.alert, labels: { rule: "low", watch: "w", source: "balances", severity: "warning" } } };
}

describe("a route's mute_time_intervals in the dispatcher", () => {
  it("holds a routed alert while its route is muted, records it as muted with the interval's name, and never passes it to a sibling", async () => {
    clockAt(6, 12); // a Saturday noon
    const chat = recording("chat");
    const pager = recording("pager");
    const sinks = [chat, pager].map((sink) => ({ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: DAY * 30 }));
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks, rules: [{ name: "low", routed: true }], routes });
    // The tree sends a warning to chat only (the first route matches and does not continue).
    await commit(env.store, [warning("w1", "chat")]);
    const result = await dispatcher.drain({ timeoutMs: 5_000 });

    expect(result.suppressed).toBe(1);
    expect(chat.calls).toEqual([]);
    expect(pager.calls).toEqual([]);
    const stored = await env.store.listOutbox();
    expect(stored.map((e) => [e.id, e.state])).toEqual([["w1:chat", "delivered"]]);
    expect(Object.values(await readSuppressedNotes(env.store, stored)).map((n) => n.reason)).toEqual(["muted"]);
    expect((await env.store.listAttempts({ outcome: "suppressed" })).map((a) => [a.alert_id, a.error])).toEqual([["w1", 'muted: routes.routes[0] is in mute time interval "weekend"']]);
    expect(await counter(env.common, "alertsSuppressed", { rule: "low", reason: "muted" })).toBe(1);

    // On Monday the route sends again.
    clockAt(1, 10);
    await commit(env.store, [warning("w2", "chat")]);
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(chat.delivered).toEqual(["w2"]);
  });

  it("an episode still firing when the mute ends is sent then; one that resolved meanwhile is not heard of", async () => {
    const saturday = clockAt(6, 12);
    const chat = recording("chat");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink: chat, concurrency: 1, maxAttempts: 5, maxAgeMs: DAY * 30 }], rules: [{ name: "low", routed: true }], routes });
    const episode = (id: string, episodeId: string, status: "firing" | "resolved") => {
      const base = warning(id, "chat");
      return { ...base, alert: { ...base.alert, episode_id: episodeId, status } };
    };
    // Two episodes start on Saturday; the second resolves on Sunday.
    await commit(env.store, [episode("ep1", "ep1", "firing"), episode("ep2", "ep2", "firing")]);
    expect((await dispatcher.drain({ timeoutMs: 5_000 })).pending).toBe(2);
    const monday = saturday + 36 * HOUR; // Monday 00:00 UTC: the weekend's end
    const waiting = await env.store.listOutbox({ state: "pending" });
    expect(waiting.map((e) => [e.id, e.attempts, e.next_attempt_at])).toEqual([
      ["ep1:chat", 0, new Date(monday).toISOString()],
      ["ep2:chat", 0, new Date(monday).toISOString()],
    ]);
    expect((await env.store.listAttempts({ outcome: "suppressed" })).map((a) => a.error)).toEqual([
      `muted until ${new Date(monday).toISOString()}: routes.routes[0] is in mute time interval "weekend"`,
      `muted until ${new Date(monday).toISOString()}: routes.routes[0] is in mute time interval "weekend"`,
    ]);
    env.clock.offsetMs += 12 * HOUR; // Sunday
    await commit(env.store, [episode("ep2:resolved", "ep2", "resolved")]);
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(chat.calls).toEqual([]);

    // A restart on Sunday changes nothing: the waits are in the store.
    await dispatcher.stop();
    await env.reopen();
    const after = createDispatcher(env.common, { store: env.store, sinks: [{ sink: chat, concurrency: 1, maxAttempts: 5, maxAgeMs: DAY * 30 }], rules: [{ name: "low", routed: true }], routes });
    env.clock.offsetMs += monday + 60_000 - (saturday + 12 * HOUR); // Monday 00:01
    const result = await after.drain({ timeoutMs: 5_000 });
    expect(chat.delivered).toEqual(["ep1"]);
    expect(result).toMatchObject({ delivered: 1, suppressed: 2, pending: 0 });
    const notes = await readSuppressedNotes(env.store, await env.store.listOutbox());
    expect(Object.keys(notes).sort()).toEqual(["ep2:chat", "ep2:resolved:chat"]);
  });

  it("mutes only the route that is muted: an alert of a rule with notify: goes past the tree", async () => {
    clockAt(0, 12); // a Sunday
    const chat = recording("chat");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink: chat, concurrency: 1, maxAttempts: 5, maxAgeMs: DAY * 30 }], rules: [{ name: "low" }], routes });
    await commit(env.store, [warning("w1", "chat")]);
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(chat.delivered).toEqual(["w1"]);
  });
});
