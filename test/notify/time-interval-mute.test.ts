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

  it("mutes only the route that is muted: an alert of a rule with notify: goes past the tree", async () => {
    clockAt(0, 12); // a Sunday
    const chat = recording("chat");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink: chat, concurrency: 1, maxAttempts: 5, maxAgeMs: DAY * 30 }], rules: [{ name: "low" }], routes });
    await commit(env.store, [warning("w1", "chat")]);
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(chat.delivered).toEqual(["w1"]);
  });
});
