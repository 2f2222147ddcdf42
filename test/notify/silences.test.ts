import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSuppressedNotes } from "../../src/notify/cooldown.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { parseMatchers } from "../../src/notify/matchers.js";
import { buildRouteTree } from "../../src/notify/routes.js";
import { createSilenceBook, newSilence, silenceMatches, silenceProblem } from "../../src/notify/silences.js";
import { openSqliteStore } from "../../src/store/open-store.js";
import { commit, counter, createEnv, entry, recording, transient, type TestEnv } from "./dispatcher-fixtures.js";

const HOUR = 3_600_000;
const WALLET_A = "0x00000000000000000000000000000000000000aa";
const WALLET_B = "0x00000000000000000000000000000000000000bb";

let env: TestEnv;
beforeEach(async () => {
  env = await createEnv();
});
afterEach(async () => {
  await env?.cleanup(); // none when the test made none (shuffled, a test without one may run first)
});

const sinkOptions = (name: string, sink = recording(name)) => ({ sink, concurrency: 1, maxAttempts: 5, maxAgeMs: HOUR });

/** A second connection to the store, as `kaiawatch silence` opens one beside a running daemon. */
async function cliConnection() {
  return openSqliteStore(env.common, { path: env.path, readOnly: true, silencesWritable: true });
}

describe("silences in the dispatcher", () => {
  it("hold back exactly the alerts they match until they expire; held-back alerts are recorded, counted and never sent", async () => {
    const silence = newSilence({ rule: "big", match: { to: WALLET_A.toUpperCase().replace("0X", "0x") }, forMs: HOUR, reason: "maintenance", now: env.common.now() });
    await env.store.silences.add(silence);
    const book = await createSilenceBook(env.common, { silences: env.store.silences });
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
    const book = await createSilenceBook(env.common, { silences: env.store.silences });
    const sink = recording("out", (_delivery, call) => {
      if (call === 0) throw transient();
    });
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [sinkOptions("out", sink)], rules: [{ name: "big" }], silences: book, backoff: { baseMs: 60_000, maxMs: 60_000 }, random: () => 0.5 });
    await commit(env.store, [entry("retried", "out", "big", { record: { to: WALLET_A } })]);
    await dispatcher.drain({ timeoutMs: 100, flushGroups: false });
    expect((await env.store.listOutbox({ state: "pending" }))[0]?.attempts).toBe(1);

    await env.store.silences.add(newSilence({ rule: "big", match: {}, forMs: HOUR, reason: "r", now: env.common.now() }));
    env.clock.offsetMs = 120_000;
    await dispatcher.drain({ timeoutMs: 5_000 });
    expect(sink.delivered).toEqual(["retried"]);
  });

  it("picks up silences added and removed on another connection (the CLI's) without a restart, and keeps them in the store", async () => {
    const book = await createSilenceBook(env.common, { silences: env.store.silences });
    const probe = entry("x", "out", "big", { record: { to: WALLET_A } }).alert;
    expect(book.silencing("big", probe, env.common.now())).toBeUndefined();

    const cli = await cliConnection();
    const silence = newSilence({ rule: "big", match: { to: WALLET_A }, forMs: HOUR, reason: "r", now: env.common.now() });
    await cli.silences.add(silence);
    await book.current(env.common.now());
    expect(book.silencing("big", probe, env.common.now())?.id).toBe(silence.id);

    // A restart reads them from the store.
    await env.reopen();
    const again = await createSilenceBook(env.common, { silences: env.store.silences });
    expect(again.list(env.common.now()).map((s) => s.id)).toEqual([silence.id]);

    expect((await cli.silences.remove(silence.id, env.common.now()))?.id).toBe(silence.id);
    await cli.close();
    await again.current(env.common.now());
    expect(again.silencing("big", probe, env.common.now())).toBeUndefined();
    expect(await env.store.silences.active(env.common.now())).toEqual([]);
  });

  // In one process the two connections cannot wait for each other (SQLite's busy wait blocks
  // the thread the other's commit needs), so they take turns; across processes WAL serialises them.
  it("keeps every silence written in turns by the daemon's connection and a CLI's", async () => {
    const now = env.common.now();
    const cli = await cliConnection();
    const silences = Array.from({ length: 8 }, (_, i) => newSilence({ rule: "big", match: { to: `0x${String(i).padStart(40, "0")}` }, forMs: HOUR, reason: `r${i}`, now }));
    for (const [i, silence] of silences.entries()) await (i % 2 === 0 ? cli : env.store).silences.add(silence);
    await cli.close();
    const book = await createSilenceBook(env.common, { silences: env.store.silences });
    expect(book.list(now).map((s) => s.id).sort()).toEqual(silences.map((s) => s.id).sort());
  });
});

describe("label silences in the dispatcher", () => {
  const labelled = (id: string, rule: string, severity: string, record: unknown = {}) => {
    const base = entry(id, "out", rule, { record });
    return { ...base, alert: { ...base.alert, labels: { rule, watch: "drops", source: "nft_transfers", severity, team: "nft-drops" } } };
  };

  it("a label silence holds back a routed alert and a record-field silence beside it holds its rule's, both through a restart", async () => {
    const now = env.common.now();
    const byLabels = newSilence({ match: {}, matchers: parseMatchers('{severity="warning", team=~"nft.*"}'), forMs: HOUR, reason: "release night", now });
    const byRecord = newSilence({ rule: "big", match: { to: WALLET_A }, forMs: HOUR, reason: "one noisy counterparty", now: now + 1 });
    // Added through the CLI's connection, beside the store the daemon holds.
    const cli = await cliConnection();
    await cli.silences.add(byLabels);
    await cli.silences.add(byRecord);
    await cli.close();

    // A restart: the silences are rows of the store, read again by the next process.
    await env.reopen();
    const routes = buildRouteTree({ receiver: "out", group_wait: 0, group_by: ["..."] });
    const book = await createSilenceBook(env.common, { silences: env.store.silences });
    const sink = recording("out");
    const dispatcher = createDispatcher(env.common, { store: env.store, sinks: [sinkOptions("out", sink)], rules: [{ name: "mint", routed: true }, { name: "big" }], routes, silences: book });
    await commit(env.store, [labelled("w1", "mint", "warning"), labelled("c1", "mint", "critical"), labelled("a1", "big", "info", { to: WALLET_A }), labelled("b1", "big", "info", { to: WALLET_B })]);
    const result = await dispatcher.drain({ timeoutMs: 5_000 });

    expect(result.suppressed).toBe(2);
    expect(sink.delivered.sort()).toEqual(["b1", "c1"]);
    const notes = await readSuppressedNotes(env.store, await env.store.listOutbox());
    expect(Object.entries(notes).map(([id, note]) => [id, note.reason]).sort()).toEqual([
      ["a1:out", "silence"],
      ["w1:out", "silence"],
    ]);
    expect(book.list(env.common.now()).map((s) => [s.id, s.suppressed])).toEqual([
      [byLabels.id, 1],
      [byRecord.id, 1],
    ]);
  });

  it("refuses a silence of everything and one whose matchers all match the empty string", () => {
    expect(silenceProblem({ matchers: [] })).toMatch(/silence of every alert/);
    expect(silenceProblem({ matchers: parseMatchers('team=~".*"') })).toMatch(/must not match the empty string/);
    expect(silenceProblem({ matchers: parseMatchers('team=~".*", severity="warning"') })).toBeUndefined();
    expect(silenceProblem({ rule: "big", matchers: [] })).toBeUndefined();
    // A row whose matchers do not read (no kaiawatch wrote it) holds nothing, and breaks no round.
    const unreadable = { ...newSilence({ match: {}, matchers: parseMatchers('severity="warning"'), forMs: HOUR, reason: "x", now: env.common.now() }), matchers: ["severity"] };
    expect(silenceMatches(unreadable, "mint", labelled("w1", "mint", "warning").alert)).toBe(false);
  });
});
