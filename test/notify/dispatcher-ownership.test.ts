import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { commit, createEnv, entry, TestSink, until, waitForAbort, type TestEnv } from "./dispatcher-fixtures.js";

/** Replicas: a sink is delivered only while this process holds its lease (ownership.ts). */
let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env?.cleanup(); // none when the test made none (shuffled, a test without one may run first)
});

describe("a dispatcher that loses a sink's lease", () => {
  it("abandons the sink's send in flight and starts no other, so that two replicas never send for one sink at once; the entries stay pending for the new holder", async () => {
    let held = true;
    const ownership = { holds: () => (held ? {} : undefined) };
    // The first send hangs (a slow receiver) until it is abandoned; later ones succeed.
    const sink = new TestSink("out", (_delivery, call, signal) => (call === 0 ? waitForAbort(signal) : undefined));
    const dispatcher = createDispatcher(env.common, { store: env.store, ownership, sinks: [{ sink, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }], rules: [], idlePollMs: 20 });
    await commit(env.store, [entry("a1", "out"), entry("a2", "out")]);
    dispatcher.start();
    try {
      await until(() => sink.calls.length === 1, 10_000, "the first send");
      held = false;
      await until(() => sink.inFlight === 0, 10_000, "the send in flight to be abandoned");
      // The queued a2 did not start when a1's slot freed: both entries wait, never attempted.
      expect(env.logLines.some((line) => line.includes("the sink's lease was lost"))).toBe(true);
      expect(sink.calls.length).toBe(1);
      expect((await env.store.listOutbox({ state: "pending" })).map((e) => [e.id, e.attempts])).toEqual([
        ["a1:out", 0],
        ["a2:out", 0],
      ]);
      // The lease comes back (or another replica's dispatcher holds it): both are sent, under their ids.
      held = true;
      dispatcher.kick();
      await until(async () => (await env.store.countOutbox({ state: "delivered" })) === 2, 10_000, "both delivered");
      expect(sink.calls.map((c) => c.id)).toEqual(["a1", "a1", "a2"]);
    } finally {
      await dispatcher.stop();
    }
  });
});
