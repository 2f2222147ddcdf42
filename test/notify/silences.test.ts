import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { readSuppressedNotes } from "../../src/notify/cooldown.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import {
  SILENCES_META_KEY,
  createSilenceBook,
  mergeSilenceSets,
  newSilence,
  readStoredSilences,
  updateSilenceFile,
  type Silence,
  type SilenceSet,
} from "../../src/notify/silences.js";
import { commit, counter, createEnv, entry, recording, transient, type TestEnv } from "./dispatcher-fixtures.js";

const HOUR = 3_600_000;
const WALLET_A = "0x00000000000000000000000000000000000000aa";
const WALLET_B = "0x00000000000000000000000000000000000000bb";

let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env.cleanup();
});

const sinkOptions = (name: string, sink = recording(name)) => ({ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: HOUR });

describe("silence sets", () => {
  it("merge to the same set in any order and any number of times, a removal always winning over its silence", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const silenceArb = fc.record({ id: fc.constantFrom("sil_1", "sil_2", "sil_3"), offset: fc.integer({ min: -HOUR, max: HOUR }) }).map(
      ({ id, offset }): Silence => ({ id, rule: "r", match: {}, reason: "x", created_at: new Date(now - HOUR).toISOString(), expires_at: new Date(now + offset).toISOString() }),
    );
    const setArb = fc.record({
      silences: fc.uniqueArray(silenceArb, { selector: (s) => s.id }),
      removed: fc.dictionary(fc.constantFrom("sil_1", "sil_2", "sil_3"), fc.constant(new Date(now + HOUR).toISOString())),
    });
    fc.assert(
      fc.property(fc.array(setArb, { minLength: 1, maxLength: 4 }), (sets: SilenceSet[]) => {
        const merged = mergeSilenceSets(sets, now);
        expect(mergeSilenceSets([...sets].reverse(), now)).toEqual(merged);
        expect(mergeSilenceSets([merged, ...sets], now)).toEqual(merged);
        for (const silence of merged.silences) {
          expect(Object.hasOwn(merged.removed, silence.id)).toBe(false);
          expect(Date.parse(silence.expires_at)).toBeGreaterThan(now);
        }
      }),
    );
  });
});

describe("silences in the dispatcher", () => {
  it("hold back exactly the alerts they match until they expire; held-back alerts are recorded, counted and never sent", async () => {
    const file = join(env.dir, "store.json.silences.json");
    const silence = newSilence({ rule: "big", match: { to: WALLET_A.toUpperCase().replace("0X", "0x") }, forMs: HOUR, reason: "maintenance", now: env.common.now() });
    await updateSilenceFile(file, (set) => ({ ...set, silences: [silence] }), env.common.now());
    const book = await createSilenceBook(env.common, { store: env.store, file, refreshMs: 0 });
    const sink = recording("out");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [sinkOptions("out", sink)], rules: [{ name: "big" }, { name: "other" }], silences: book });

    await commit(env.store, [
      entry("a-to-a", "out", "big", { record: { to: WALLET_A } }),
      entry("a-to-b", "out", "big", { record: { to: WALLET_B } }),
      entry("other-to-a", "out", "other", { record: { to: WALLET_A } }),
    ]);
    const first = await dispatcher.drain({ timeoutMs: 5_000 });
    expect(sink.delivered.sort()).toEqual(["a-to-b", "other-to-a"]);
    expect(first.suppressed).toBe(1);
    expect((await env.store.listOutbox({ state: "pending" }))).toEqual([]);
    expect((await env.store.listOutbox({ state: "delivered" })).map((e) => e.id).sort()).toEqual(["a-to-a:out", "a-to-b:out", "other-to-a:out"]);
    expect(Object.keys(await readSuppressedNotes(env.store, await env.store.listOutbox()))).toEqual(["a-to-a:out"]);
    expect(await counter(env.common, "alertsSuppressed", { rule: "big", reason: "silence" })).toBe(1);
    expect(await counter(env.common, "alertsSuppressed", { reason: "cooldown" })).toBe(0);
    expect(book.list(env.common.now()).map((s) => [s.id, s.suppressed])).toEqual([[silence.id, 1]]);

    // An hour later the silence has ended by itself: the same kind of alert goes out again.
    env.clock.offsetMs = HOUR + 1;
    await commit(env.store, [entry("later-to-a", "out", "big", { record: { to: WALLET_A } })]);
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(sink.delivered).toContain("later-to-a");
    expect(sink.delivered).not.toContain("a-to-a");
    expect(book.list(env.common.now())).toEqual([]);
  });

  it("never holds back a retry: an alert whose first attempt was made before the silence still goes out", async () => {
    const file = join(env.dir, "store.json.silences.json");
    const book = await createSilenceBook(env.common, { store: env.store, file, refreshMs: 0 });
    const sink = recording("out", (_delivery, call) => {
      if (call === 0) throw transient();
    });
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [sinkOptions("out", sink)], rules: [{ name: "big" }], silences: book, backoff: { baseMs: 60_000, maxMs: 60_000 }, random: () => 0.5 });
    await commit(env.store, [entry("retried", "out", "big", { record: { to: WALLET_A } })]);
    await dispatcher.drain({ timeoutMs: 100, flushGroups: false });
    expect((await env.store.listOutbox({ state: "pending" }))[0]?.attempts).toBe(1);

    await updateSilenceFile(file, (set) => ({ ...set, silences: [newSilence({ rule: "big", match: {}, forMs: HOUR, reason: "r", now: env.common.now() })] }), env.common.now());
    env.clock.offsetMs = 120_000;
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(sink.delivered).toEqual(["retried"]);
  });

  it("picks up silences added and removed in the side file without a restart, and keeps them in the store", async () => {
    const file = join(env.dir, "store.json.silences.json");
    const book = await createSilenceBook(env.common, { store: env.store, file, refreshMs: 0 });
    const probe = entry("x", "out", "big", { record: { to: WALLET_A } }).alert;
    expect(book.silencing("big", probe, env.common.now())).toBeUndefined();

    const silence = newSilence({ rule: "big", match: { to: WALLET_A }, forMs: HOUR, reason: "r", now: env.common.now() });
    await updateSilenceFile(file, (set) => ({ ...set, silences: [...set.silences, silence] }), env.common.now());
    expect(book.silencing("big", probe, env.common.now())?.id).toBe(silence.id);
    await env.store.flush();
    expect((await readStoredSilences(env.store)).set.silences.map((s) => s.id)).toEqual([silence.id]);

    // A restart reads the store even when the side file is gone.
    await env.reopen();
    const again = await createSilenceBook(env.common, { store: env.store, file: join(env.dir, "no-such-file.json"), refreshMs: 0 });
    expect(again.list(env.common.now()).map((s) => s.id)).toEqual([silence.id]);

    await updateSilenceFile(file, (set) => ({ ...set, removed: { ...set.removed, [silence.id]: silence.expires_at } }), env.common.now());
    const withFile = await createSilenceBook(env.common, { store: env.store, file, refreshMs: 0 });
    expect(withFile.silencing("big", probe, env.common.now())).toBeUndefined();
    await env.store.flush();
    expect((await readStoredSilences(env.store)).set.silences).toEqual([]);
    expect(Object.keys(((await env.store.getMeta<SilenceSet>(SILENCES_META_KEY)) ?? { removed: {} }).removed)).toEqual([silence.id]);
  });

  it("lets two writers of the side file add silences at once without losing one", async () => {
    const file = join(env.dir, "store.json.silences.json");
    const now = env.common.now();
    const silences = Array.from({ length: 8 }, (_, i) => newSilence({ rule: "big", match: { to: `0x${String(i).padStart(40, "0")}` }, forMs: HOUR, reason: `r${i}`, now }));
    await Promise.all(silences.map((silence) => updateSilenceFile(file, (set) => ({ ...set, silences: [...set.silences, silence] }), now)));
    const book = await createSilenceBook(env.common, { store: env.store, file, refreshMs: 0 });
    expect(book.list(now).map((s) => s.id).sort()).toEqual(silences.map((s) => s.id).sort());
  });
});
