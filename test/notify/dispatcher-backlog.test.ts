import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { commit, createEnv, entry, recording, transient, until, type TestEnv } from "./dispatcher-fixtures.js";
import { workFor } from "../helpers/wait-for.js";

/**
 * A long backlog on a sink with concurrency 1: outcomes are recorded without waiting for
 * their fsync and sends follow each other from the planned queue, so this must still hold:
 * each alert once, in the order added, durable when drain returns, new alerts not starved.
 */
let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env?.cleanup(); // none when the test made none (shuffled, a test without one may run first)
});

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, "0")}`);

describe("a backlog on one sink", () => {
  it("delivers each alert once, in the order added, and every outcome is on disk when drain returns", async () => {
    const alertIds = ids("a", 500);
    await commit(env.store, alertIds.map((id) => entry(id, "out")));
    const sink = recording("out");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: [] });

    const result = await dispatcher.drain({ timeoutMs: 60_000 });

    expect(result).toMatchObject({ delivered: 500, pending: 0, timedOut: false });
    expect(sink.delivered).toEqual(alertIds);
    expect(sink.maxInFlight).toBe(1);
    // Read back from the file, not from memory.
    const reopened = await env.reopen();
    expect((await reopened.listOutbox({ state: "delivered" }))).toHaveLength(500);
    expect((await reopened.listOutbox({ state: "pending" }))).toHaveLength(0);
  });

  it("sends alerts committed while the backlog drains, after the older ones", async () => {
    const first = ids("a", 200);
    const later = ids("b", 50);
    await commit(env.store, first.map((id) => entry(id, "out")));
    const sink = recording("out", () => workFor(1));
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: [] });
    dispatcher.start();
    try {
      await until(() => sink.delivered.length >= 20, 20_000, "the first deliveries");
      await commit(env.store, later.map((id) => entry(id, "out")));
      dispatcher.kick();
      await until(() => sink.delivered.length === 250, 30_000, "every alert");
    } finally {
      await dispatcher.stop();
    }
    expect(sink.delivered).toEqual([...first, ...later]);
  });

  it("a failure in the middle of a backlog retries that alert without holding back the rest", async () => {
    const alertIds = ids("a", 100);
    await commit(env.store, alertIds.map((id) => entry(id, "out")));
    let failed = false;
    const sink = recording("out", (delivery) => {
      if (!failed && delivery.alerts[0]?.id === "a0042") {
        failed = true;
        throw transient();
      }
    });
    const dispatcher = createDispatcher(env.common, {
      store: env.store,
      sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }],
      rules: [],
      // 50 ms exactly (random() = 1): the next alert goes first whatever the jitter would draw.
      backoff: { baseMs: 50, maxMs: 50 },
      random: () => 1,
    });

    const result = await dispatcher.drain({ timeoutMs: 30_000 });

    expect(result).toMatchObject({ delivered: 100, retried: 1, dead: 0, pending: 0 });
    expect([...sink.delivered].sort()).toEqual(alertIds);
    expect(sink.delivered.filter((id) => id === "a0042")).toHaveLength(1);
    // The alerts after it did not wait for its retry.
    expect(sink.delivered.indexOf("a0043")).toBeLessThan(sink.delivered.indexOf("a0042"));
    const reopened = await env.reopen();
    expect((await reopened.listOutbox({ state: "delivered" })).find((e) => e.alert.id === "a0042")?.attempts).toBe(2);
  });
});

describe("passes bounded by passLimit", () => {
  it("work through a backlog larger than one pass reads, each alert once, in order", async () => {
    const alertIds = ids("a", 120);
    await commit(env.store, alertIds.map((id) => entry(id, "out")));
    const sink = recording("out");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink, concurrency: 2, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: [], passLimit: 7 });
    const result = await dispatcher.drain({ timeoutMs: 60_000 });
    expect(result).toMatchObject({ delivered: 120, pending: 0, timedOut: false });
    expect([...sink.delivered].sort()).toEqual(alertIds);
  });

  it("send a persisted digest whole even when the limit cuts through its members", async () => {
    // A digest of three whose members lie far apart among other pending alerts: a pass of
    // two reads only the first member, and must fetch the others rather than send a part.
    await commit(env.store, [entry("m1", "out"), ...ids("o", 10).map((id) => entry(id, "out")), entry("m2", "out"), entry("m3", "out")]);
    await env.store.updateOutbox(["m1", "m2", "m3"].map((id) => ({ id: `${id}:out`, kind: "group" as const, group_id: "grp_cut" })));
    const sink = recording("out");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: [], passLimit: 2 });
    const result = await dispatcher.drain({ timeoutMs: 60_000 });
    expect(result).toMatchObject({ delivered: 13, pending: 0 });
    const digest = sink.calls.filter((call) => call.id === "grp_cut");
    expect(digest).toHaveLength(1);
    expect(digest[0]?.alertIds).toEqual(["m1", "m2", "m3"]);
  });
});
