import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher, type Dispatcher, type DispatcherOptions, type DispatcherRule } from "../../src/notify/dispatcher.js";
import { readRecordField } from "../../src/notify/grouping.js";
import type { Delivery } from "../../src/notify/sink.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { commit, counter, createEnv, entry, recording, transient, until, type TestEnv } from "./dispatcher-fixtures.js";
import { observeFor } from "../helpers/wait-for.js";

let env: TestEnv;
const dispatchers: Dispatcher[] = [];

afterEach(async () => {
  for (const d of dispatchers.splice(0)) await d.stop();
  await env?.cleanup(); // none when the test made none (shuffled, a test without one may run first)
});

function dispatcher(options: Partial<DispatcherOptions> & Pick<DispatcherOptions, "sinks" | "rules">): Dispatcher {
  // random() = 1 puts every backoff at its ceiling: an hour's backoff is never a few milliseconds.
  const d = createDispatcher(env.common, { store: env.store, idlePollMs: 50, backoff: { baseMs: 20, maxMs: 200 }, random: () => 1, stopTimeoutMs: 500, ...options });
  dispatchers.push(d);
  return d;
}

const mintRecord = (i: number, contract = "0xAAAA000000000000000000000000000000000001") => ({
  contract: { contract_address: contract, contract_type: "kip17" },
  token_id: String(i),
  from: "0x0000000000000000000000000000000000000000",
  to: "0xbbbb000000000000000000000000000000000002",
});

const mints = (count: number, sink: string, rule = "mint", contract?: string) =>
  Array.from({ length: count }, (_, i) => entry(`m${i}`, sink, rule, { record: mintRecord(i, contract) }));

describe("dispatcher: digests", () => {
  it("gathers 500 alerts of a grouped rule into one digest when max >= 500", async () => {
    env = await createEnv();
    const sink = recording("slack");
    await commit(env.store, mints(500, "slack"));
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [{ name: "mint", group: { windowMs: 30_000, max: 1000 } }] });

    const result = await d.drain();
    expect(result).toMatchObject({ delivered: 500, pending: 0 });
    expect(sink.calls).toHaveLength(1);
    const [call] = sink.calls;
    expect(call!.alertIds).toHaveLength(500);
    expect(new Set(call!.alertIds).size).toBe(500);
    expect(call!.id).toMatch(/^grp_[0-9a-f]{32}$/);
    const stored = await env.store.listOutbox();
    expect(stored.every((e) => e.state === "delivered" && e.group_id === call!.id)).toBe(true);
  });

  it("splits them into ceil(500/max) digests of at most max alerts, oldest first", async () => {
    env = await createEnv();
    const sink = recording("slack");
    await commit(env.store, mints(500, "slack"));
    const d = dispatcher({ sinks: [{ sink, concurrency: 2, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [{ name: "mint", group: { windowMs: 30_000, max: 120 } }] });

    await d.drain();
    expect(sink.calls.map((c) => c.alertIds.length).sort((a, b) => b - a)).toEqual([120, 120, 120, 120, 20]);
    expect(new Set(sink.calls.map((c) => c.id)).size).toBe(5);
    expect(sink.delivered.sort()).toEqual(Array.from({ length: 500 }, (_, i) => `m${i}`).sort());
    const first = sink.calls.find((c) => c.alertIds.includes("m0"))!;
    expect(first.alertIds).toEqual(Array.from({ length: 120 }, (_, i) => `m${i}`));
  });

  it("waits for the window (counted from the oldest alert) before sending a digest that is not full", async () => {
    env = await createEnv();
    const sink = recording("slack");
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [{ name: "mint", group: { windowMs: 300, max: 50 } }] });
    // Both committed before the dispatcher starts: however late it starts (a busy machine), the
    // late alert is in the outbox before the window can close, so it joins the same digest.
    const firstCommitted = performance.now();
    await commit(env.store, mints(3, "slack"));
    await commit(env.store, [entry("late", "slack", "mint", { record: mintRecord(9) })]);
    d.start();
    d.kick();
    await until(() => sink.delivered.length === 4, 10_000, "the digest");
    expect(sink.calls).toHaveLength(1);
    expect(sink.calls[0]!.startedAt - firstCommitted).toBeGreaterThanOrEqual(300 - 10);
    expect(sink.calls[0]!.alertIds).toEqual(["m0", "m1", "m2", "late"]);
  });

  it("sends a digest as soon as max alerts are waiting", async () => {
    env = await createEnv();
    const sink = recording("slack");
    // A one-hour window: only `max` can close these digests.
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [{ name: "mint", group: { windowMs: 3600_000, max: 10 } }] });
    d.start();
    await commit(env.store, mints(25, "slack"));
    d.kick();
    await until(() => sink.delivered.length === 20, 10_000, "two full digests");
    await observeFor(200);
    expect(sink.calls.map((c) => c.alertIds.length)).toEqual([10, 10]);
    expect((await env.store.listOutbox({ state: "pending" }))).toHaveLength(5);
  });

  it("makes one digest per `by` value read from the record", async () => {
    env = await createEnv();
    const sink = recording("slack");
    const a = "0xAAAA000000000000000000000000000000000001";
    const b = "0xbbbb000000000000000000000000000000000002";
    const entries = [
      ...Array.from({ length: 4 }, (_, i) => entry(`a${i}`, "slack", "mint", { record: mintRecord(i, a) })),
      ...Array.from({ length: 3 }, (_, i) => entry(`b${i}`, "slack", "mint", { record: mintRecord(i, b) })),
      // the same contract written in upper case: addresses compare case-insensitively
      entry("a-upper", "slack", "mint", { record: mintRecord(7, a.toUpperCase().replace("0X", "0x")) }),
    ];
    await commit(env.store, entries);
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules: [{ name: "mint", group: { windowMs: 30_000, max: 100, by: "contract" } }] });
    await d.drain();
    expect(sink.calls.map((c) => c.alertIds).sort((x, y) => y.length - x.length)).toEqual([
      ["a0", "a1", "a2", "a3", "a-upper"],
      ["b0", "b1", "b2"],
    ]);
  });

  it("persists the group id before the first send and resends the same digest id after a restart", async () => {
    env = await createEnv();
    const seenOnDisk: Array<string | undefined> = [];
    const failing = recording("hook", (delivery: Delivery) => {
      // What a crash right now would leave: the file on disk.
      const file = readOnDisk(env.path);
      for (const e of file.outbox) if (delivery.alerts.some((a) => `${a.id}:hook` === e.id)) seenOnDisk.push(e.group_id);
      throw transient();
    });
    const rules: DispatcherRule[] = [{ name: "mint", group: { windowMs: 50, max: 100 } }];
    await commit(env.store, mints(30, "hook"));
    // An hour of backoff: exactly one attempt before the stop.
    const first = dispatcher({ sinks: [{ sink: failing, concurrency: 1, maxAttempts: 5, maxAgeMs: 7200_000 }], rules, backoff: { baseMs: 3600_000, maxMs: 3600_000 } });
    first.start();
    first.kick();
    await until(async () => (await env.store.listOutbox())[0]!.attempts === 1, 10_000, "the failed attempt");
    await first.stop();
    expect(failing.calls).toHaveLength(1);
    const digestId = failing.calls[0]!.id;
    expect(seenOnDisk).toHaveLength(30);
    expect(seenOnDisk.every((id) => id === digestId)).toBe(true);

    // A new process on the same store, and the rule's window changed meanwhile: the persisted
    // digest is sent as it was, under the same id.
    await env.reopen();
    env.clock.offsetMs = 3600_000; // the backoff is over
    const ok = recording("hook");
    const second = dispatcher({ sinks: [{ sink: ok, concurrency: 1, maxAttempts: 5, maxAgeMs: 7200_000 }], rules: [{ name: "mint", group: { windowMs: 30_000, max: 7 } }] });
    await second.drain({ timeoutMs: 10_000 });
    expect(ok.calls.map((c) => [c.id, c.attempt, c.alertIds.length])).toEqual([[digestId, 2, 30]]);
    expect((await env.store.listOutbox()).every((e) => e.state === "delivered" && e.group_id === digestId && e.attempts === 2)).toBe(true);
  });
});

describe("dispatcher: cooldown", () => {
  const from = (address: string) => ({ from: address, to: "0x02", amount: "1" });

  it("suppresses repeats of a rule and key within the period, counts them, and remembers across a restart", async () => {
    env = await createEnv();
    const sink = recording("hook");
    const rules: DispatcherRule[] = [{ name: "outflow", cooldownMs: 60_000, cooldownKey: "from" }];
    await commit(env.store, [
      entry("x1", "hook", "outflow", { record: from("0xAA") }),
      entry("x2", "hook", "outflow", { record: from("0xaa") }),
      entry("y1", "hook", "outflow", { record: from("0xBB") }),
      entry("x3", "hook", "outflow", { record: from("0xAA") }),
      entry("other", "hook", "other-rule", { record: from("0xAA") }),
    ]);
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules });
    const result = await d.drain();
    expect(result).toMatchObject({ delivered: 3, suppressed: 2, pending: 0 });
    expect(sink.delivered).toEqual(["x1", "y1", "other"]);
    // Suppressed entries are done (delivered, never dead: `retry` must not resend them).
    const byId = new Map((await env.store.listOutbox()).map((e) => [e.id, e]));
    expect(byId.get("x2:hook")!.state).toBe("delivered");
    expect(byId.get("x3:hook")!.state).toBe("delivered");
    expect(await counter(env.common, "alertsSuppressed", { rule: "outflow", reason: "cooldown" })).toBe(2);
    await d.stop();

    // A restart within the period still honours the cooldown.
    await env.reopen();
    const again = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules });
    await commit(env.store, [entry("x4", "hook", "outflow", { record: from("0xAA") })]);
    expect(await again.drain()).toMatchObject({ delivered: 0, suppressed: 1 });

    // Past the period the next one goes out.
    env.clock.offsetMs = 61_000;
    await commit(env.store, [entry("x5", "hook", "outflow", { record: from("0xAA") })]);
    expect(await again.drain()).toMatchObject({ delivered: 1, suppressed: 0 });
    expect(sink.delivered).toEqual(["x1", "y1", "other", "x5"]);
  });

  it("never suppresses the retry of an alert it let through", async () => {
    env = await createEnv();
    const sink = recording("hook", (_d, call) => {
      if (call === 0) throw transient();
    });
    await commit(env.store, [entry("x1", "hook", "outflow")]);
    const rules: DispatcherRule[] = [{ name: "outflow", cooldownMs: 60_000 }];
    const first = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules, backoff: { baseMs: 3600_000, maxMs: 3600_000 } });
    await first.drain({ timeoutMs: 500 });
    expect((await env.store.listOutbox())[0]).toMatchObject({ state: "pending", attempts: 1 });
    await first.stop();

    await env.reopen();
    env.clock.offsetMs = 3600_000; // the backoff is over; the cooldown too, but a retry is not a repeat anyway
    const second = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 7200_000 }], rules: [{ name: "outflow", cooldownMs: 7200_000 }] });
    expect(await second.drain()).toMatchObject({ delivered: 1, suppressed: 0 });
    expect(sink.delivered).toEqual(["x1"]);
  });

  it("lets one digest of a grouped rule through per period and suppresses what follows", async () => {
    env = await createEnv();
    const sink = recording("slack");
    const rules: DispatcherRule[] = [{ name: "mint", group: { windowMs: 30_000, max: 100 }, cooldownMs: 60_000 }];
    await commit(env.store, mints(40, "slack"));
    const d = dispatcher({ sinks: [{ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: 3600_000 }], rules });
    expect(await d.drain()).toMatchObject({ delivered: 40, suppressed: 0 });
    await commit(env.store, [entry("later", "slack", "mint", { record: mintRecord(99) })]);
    expect(await d.drain()).toMatchObject({ delivered: 0, suppressed: 1 });
    expect(sink.calls).toHaveLength(1);
  });
});

describe("readRecordField", () => {
  it("reads dot paths, object addresses, <name>_address, lowercases, and '' when missing", () => {
    const nft = { contract: { contract_address: "0xABC" }, token_id: "7", from: "0xDEF" };
    const log = { contract_address: "0xAbC", log_index: 3 };
    const internal = { transaction_status: { status: "Fail" }, from: "0x1" };
    expect(readRecordField(nft, "contract")).toBe("0xabc");
    expect(readRecordField(log, "contract")).toBe("0xabc");
    expect(readRecordField(nft, "contract.contract_address")).toBe("0xabc");
    expect(readRecordField(nft, "token_id")).toBe("7");
    expect(readRecordField(log, "log_index")).toBe("3");
    expect(readRecordField(internal, "transaction_status.status")).toBe("fail");
    expect(readRecordField(internal, "to")).toBe("");
    expect(readRecordField(null, "from")).toBe("");
  });
});
