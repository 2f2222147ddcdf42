import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { judge, type ExpectedRule } from "../../bench/torture/ground-truth.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../bench/torture/receivers.js";
import type { RecordFamily } from "../../src/model/record.js";
import { createSimulator, type Poll, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";
import { faultMoment } from "../helpers/wait-for.js";
import { freePort } from "../helpers/free-port.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../helpers/postgres.js";

/**
 * Issue 15's must-shows, end to end: three `kaiawatch run` processes sharing one PostgreSQL
 * store against the simulator, with SIGKILLs of random replicas (seeded), explorer faults and
 * a failing webhook; then a measured failover, then a 30 s PostgreSQL outage. Every outcome
 * is waited for by polling its condition with a generous bound, never by sleeping on a guess.
 */
const SEED = Number(process.env.KW_CHAOS_SEED ?? 15);
const LEASE_S = 3;
/** store.lease's default: the failover it gives is computed from the one measured with LEASE_S. */
const DEFAULT_LEASE_S = 10;
/** The sources' schedule: one tick a second. */
const TICK_S = 1;
const MIN_KILLS = 30;
const OUTAGE_MS = 30_000;
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

interface RuleSpec {
  name: string;
  watch: string;
  family: RecordFamily;
  /** The explorer operation its source polls, and the address in its path. */
  op: string;
  address: (sim: Simulator) => string;
  truth: (sim: Simulator, range: { from: number; to: number }) => unknown[];
}

const RULES: RuleSpec[] = [
  { name: "wallet-nft", watch: "wallet", family: "nft_transfers", op: "accountNftTransfers", address: (s) => s.addresses.busyWallet, truth: (s, r) => s.truth.accountNftTransfers(s.addresses.busyWallet, r) },
  { name: "wallet-calls", watch: "wallet", family: "internal_transactions", op: "accountInternalTransactions", address: (s) => s.addresses.busyWallet, truth: (s, r) => s.truth.accountInternalTransactions(s.addresses.busyWallet, r) },
  { name: "token-logs", watch: "token", family: "event_logs", op: "accountEventLogs", address: (s) => s.addresses.busyToken, truth: (s, r) => s.truth.accountEventLogs(s.addresses.busyToken, r) },
  { name: "kitties", watch: "kitties", family: "nft_transfers", op: "nftTransfers", address: (s) => s.addresses.busyCollection, truth: (s, r) => s.truth.nftTransfers(s.addresses.busyCollection, r) },
];

/**
 * What PostgreSQL's stop cut short: the polls asked while it was down (`from`–`to`, by arrival),
 * and each source's committed cursor when it stopped (`committed`, by the operation and the
 * address its source polls). A window asked just before the stop but not committed by then (a
 * quiet window's advance waits for the end of its firing) could not be committed either.
 */
interface Outage {
  from: number;
  to: number;
  committed: Map<string, number>;
}

/** One process of a replica slot; each start is a new replica id, as a restarted machine would be. */
interface Incarnation {
  id: string;
  child: Child;
  statusUrl: string;
  /** The simulator's poll count when it was SIGKILLed: its polls up to here may be fetched again. */
  killedAtPoll?: number;
}

/**
 * Windows of one source fetched by two replicas: overlapping block ranges of the same operation
 * and subject. The window counts as polled twice only if the earlier replica had fetched it
 * whole: the last request it made for each page of that window before the later replica asked
 * was answered with the page (200, no fault). A fault there (a 5xx, a dropped connection, a
 * malformed or truncated body that was not fetched again) failed its tick, so it had nothing
 * to commit, and the next holder fetching the window is the retry. When the first poller had
 * been SIGKILLed before the second asked, or its window was cut short by the outage (asked
 * while PostgreSQL was down, or before but not committed when it stopped: the commit could
 * not happen, and the lease lapsed), the window is a re-fetch of uncommitted work too
 * (expected); otherwise two live replicas polled it (a bug).
 */
function doublePolls(polls: Poll[], killedAt: Map<string, number>, outage: Outage) {
  const groups = new Map<string, Poll[]>();
  for (const poll of polls) {
    if (poll.from === undefined || poll.to === undefined || poll.replica === undefined) continue;
    const key = `${poll.op} ${poll.subject}`;
    groups.set(key, [...(groups.get(key) ?? []), poll]);
  }
  const answered = (poll: Poll) => poll.status === "200" && poll.fault === undefined;
  const cutShortByOutage = (poll: Poll): boolean =>
    poll.seq <= outage.to && (poll.seq >= outage.from || poll.from! > (outage.committed.get(`${poll.op} ${poll.subject.split(" ")[0]}`) ?? Infinity));
  /** Whether `earlier`'s replica, by the time `later` was asked, had every page of its window answered. */
  const fetchedWhole = (list: Poll[], earlier: Poll, later: Poll): boolean => {
    const lastByPage = new Map<number, Poll>();
    for (const poll of list) {
      if (poll.seq >= later.seq) break;
      if (poll.replica === earlier.replica && poll.from === earlier.from && poll.to === earlier.to) lastByPage.set(poll.page, poll);
    }
    return [...lastByPage.values()].every(answered);
  };
  const refetched = { afterKill: new Set<string>(), afterOutage: new Set<string>(), afterFault: new Set<string>() };
  const live = new Set<string>();
  const examples: string[] = [];
  for (const [key, list] of groups) {
    for (let i = 0; i < list.length; i++) {
      const later = list[i] as Poll;
      for (let j = 0; j < i; j++) {
        const earlier = list[j] as Poll;
        if (earlier.replica === later.replica || earlier.to! < later.from! || later.to! < earlier.from!) continue;
        const window = `${key} ${later.from}-${later.to}`;
        const died = killedAt.get(earlier.replica!);
        if (died !== undefined && died <= later.seq) refetched.afterKill.add(window);
        else if (cutShortByOutage(earlier)) refetched.afterOutage.add(window);
        else if (!fetchedWhole(list, earlier, later)) refetched.afterFault.add(window);
        else {
          live.add(window);
          if (examples.length < 10) examples.push(`${window}: ${earlier.replica} (#${earlier.seq} ${earlier.from}-${earlier.to} page ${earlier.page}) and ${later.replica} (#${later.seq} page ${later.page})`);
        }
      }
    }
  }
  return { refetchedAfterKill: refetched.afterKill.size, refetchedAfterOutage: refetched.afterOutage.size, refetchedAfterFault: refetched.afterFault.size, byTwoLive: live.size, examples };
}

describe("three replicas on one PostgreSQL", () => {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("survive SIGKILLs, explorer faults, a failing webhook, a failover and a PostgreSQL outage with nothing lost or polled twice", async () => {
    const testStarted = Date.now();
    // Where the time goes, printed as it passes (the test must stay short: it is part of npm test).
    const phase = (name: string) => console.log(`chaos test: ${name} at ${((Date.now() - testStarted) / 1000).toFixed(1)} s`);
    const random = prng(SEED);
    const dir = mkdtempSync(join(tmpdir(), "kaiawatch-chaos-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server: TestPostgres = await startPostgres();
    cleanups.push(() => server.dispose());
    const url = await createTestDatabase(server.url);
    const db = new pg.Pool({ connectionString: url, max: 2 });
    db.on("error", () => undefined);
    cleanups.push(() => db.end());

    // The chain grows on our timer, so that it can stop for the final check.
    const sim = await createSimulator({
      seed: SEED,
      initialBlocks: 40,
      density: { eventLogs: 3, nftTransfers: 2, internalTransactions: 4 },
      faults: { serverErrorRate: 0.1, truncateRate: 0.02, malformedRate: 0.02, resetRate: 0.02 },
    });
    cleanups.push(() => sim.close());
    const miner = setInterval(() => sim.mine(), 400);
    cleanups.push(() => clearInterval(miner));
    // Read at every request: the webhook heals at the end, as the explorer does.
    const hookFaults = { failureRate: 0.2, secret: SECRET, random: prng(SEED + 1) };
    const hook: WebhookReceiver = await startWebhookReceiver(hookFaults);
    cleanups.push(() => hook.close());

    const first = sim.head() - 20;
    const configOf = (id: string, statusPort: number) => {
      const path = join(dir, `${id}.yaml`);
      writeFileSync(
        path,
        `explorer: { base_url: "${sim.url}", requests_per_second: 50, page_size: 25, max_retries: 5, timeout: 5s }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { url: "\${KW_STORE_URL}", lease: ${LEASE_S}s, replica_id: ${id} }
status: { listen: "127.0.0.1:${statusPort}" }
defaults: { schedule: "* * * * * *", start: ${first}, max_window_blocks: 30, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [nft_transfers, internal_transactions], via: own }
  - { name: token, contract: "${sim.addresses.busyToken}", via: own }
  - { name: kitties, collection: "${sim.addresses.busyCollection}", via: own }
rules:
${RULES.map((r) => `  - { name: ${r.name}, watch: ${r.watch}, source: ${r.family}, notify: [hook] }`).join("\n")}
sinks:
  hook: { type: webhook, url: "${hook.url}", allow_http: true, secret: "${SECRET}", timeout: 5s, concurrency: 2, max_attempts: 100000, max_age: 24h }
`,
      );
      return path;
    };

    const incarnations: Incarnation[] = [];
    const killedAt = new Map<string, number>();
    const slots: Incarnation[] = [];
    let started = 0;
    const launch = async (): Promise<Incarnation> => {
      const id = `r${++started}`;
      const port = await freePort();
      const child = startKaiawatch(["run", "--config", configOf(id, port), "--log-level", "info", "--log-format", "json"], { KW_STORE_URL: url });
      const one: Incarnation = { id, child, statusUrl: `http://127.0.0.1:${port}` };
      incarnations.push(one);
      return one;
    };
    const kill = async (one: Incarnation) => {
      one.killedAtPoll = sim.truth.polls().length;
      killedAt.set(one.id, one.killedAtPoll);
      one.child.process.kill("SIGKILL");
      await one.child.exited;
    };
    cleanups.push(async () => {
      for (const one of incarnations) if (one.child.process.exitCode === null && one.child.process.signalCode === null) one.child.process.kill("SIGKILL");
    });
    const cursors = async () =>
      new Map((await db.query<{ key: string; block: string; watch: string; source: string }>("SELECT key, block, cursor->>'watch' AS watch, cursor->>'source' AS source FROM cursors")).rows.map((r) => [r.key, r]));
    const pendingCount = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM outbox WHERE state = 'pending'")).rows[0]?.n);
    const readyz = new Map<string, string>();
    const ready = async (one: Incarnation) => {
      try {
        const response = await fetch(`${one.statusUrl}/readyz`);
        readyz.set(one.id, await response.text());
        return response.status;
      } catch (error) {
        readyz.set(one.id, String(error));
        return 0;
      }
    };
    /** Every live replica's /readyz answers `status`; on a timeout the error carries their last answers. */
    const allReadyz = async (status: number, timeoutMs: number, what: string) => {
      try {
        await waitFor(async () => (await Promise.all(slots.map(ready))).every((answer) => answer === status), timeoutMs, what);
      } catch (error) {
        const exited = slots.filter((one) => one.child.process.exitCode !== null).map((one) => `${one.id} exited ${one.child.process.exitCode}: ${one.child.stderr().slice(-1500)}`);
        throw new Error(`${(error as Error).message}; last /readyz: ${JSON.stringify(Object.fromEntries(slots.map((one) => [one.id, readyz.get(one.id)?.slice(0, 1500)])))}; ${exited.join("; ")}`);
      }
    };

    for (let i = 0; i < 3; i++) slots.push(await launch());
    await waitFor(async () => (await cursors().catch(() => new Map())).size === 4, 60_000, "every source's first commit");

    phase("every source committed; chaos starts");
    const chaosStarted = Date.now();
    // Chaos: a random replica SIGKILLed every 0.2–0.6 s and started again (a new id) 0–0.3 s later.
    // (A source's lease row is named by its key; a sink's by sink:<name>.)
    let kills = 0;
    while (kills < MIN_KILLS) {
      await faultMoment(200 + random() * 400);
      const slot = Math.floor(random() * slots.length);
      await kill(slots[slot] as Incarnation);
      kills += 1;
      await faultMoment(random() * 300);
      slots[slot] = await launch();
    }
    const chaosMs = Date.now() - chaosStarted;
    phase("chaos over");
    const unexpectedExits = incarnations.filter((one) => one.killedAtPoll === undefined && one.child.process.exitCode !== null);
    expect(unexpectedExits.map((one) => `${one.id}: ${one.child.stderr().slice(-800)}`)).toEqual([]);

    // Failover: the holder of one source is killed; another commits its next window.
    const sourceKey = [...(await cursors()).keys()][0] as string;
    // Right after the chaos a killed replica may still hold it until its lease expires: wait for a live holder.
    const liveHolder = async () => {
      const row = (await db.query<{ owner: string | null; expires_ms: string }>("SELECT owner, expires_ms FROM leases WHERE key = $1", [sourceKey])).rows[0];
      return row !== undefined && Number(row.expires_ms) > Date.now() ? slots.find((one) => one.id === row.owner) : undefined;
    };
    await waitFor(async () => (await liveHolder()) !== undefined, 30_000, "a live holder of the source");
    const holder = (await liveHolder()) as Incarnation;
    const blockBefore = Number((await cursors()).get(sourceKey)?.block);
    const killedMs = Date.now();
    await kill(holder);
    await waitFor(async () => Number((await cursors()).get(sourceKey)?.block) > blockBefore, 60_000, "the source's next window, committed by another replica");
    const failoverMs = Date.now() - killedMs;
    slots[slots.indexOf(holder)] = await launch();
    // The takeover waits for the lease and the renewal that notices its expiry (a third of
    // it); the rest (one tick, the commit) does not depend on the lease. So with the default
    // lease it is the measured time plus the difference of those two parts.
    const failoverDefaultMs = failoverMs + (DEFAULT_LEASE_S - LEASE_S) * (4 / 3) * 1000;
    console.log(
      `failover: the next window of ${sourceKey} was committed ${(failoverMs / 1000).toFixed(1)} s after its holder was SIGKILLed (lease ${LEASE_S} s, tick ${TICK_S} s); ` +
        `with the default lease (${DEFAULT_LEASE_S} s): ${(failoverDefaultMs / 1000).toFixed(1)} s (target ≤ 15 s)`,
    );
    // Printed, not asserted: a test must not fail on a busy machine. The target (≤ 15 s with the
    // default lease) is measured by `npm run bench -- replicas`, with real processes and that lease;
    // here the wait above (60 s at most) is what the test requires: another replica took over.

    // PostgreSQL down for 30 s: nothing commits, /readyz says so; they resume by themselves.
    await allReadyz(200, 60_000, "every replica ready before the outage");
    phase("failover measured, every replica ready; PostgreSQL stops");
    const atStop = await cursors();
    const outagePolls: Outage = {
      from: sim.truth.polls().length,
      to: Number.MAX_SAFE_INTEGER,
      committed: new Map(RULES.map((rule) => [`${rule.op} ${rule.address(sim).toLowerCase()}`, Number([...atStop.values()].find((c) => c.watch === rule.watch && c.source === rule.family)?.block)])),
    };
    await server.stop();
    const outageStarted = Date.now();
    await allReadyz(503, OUTAGE_MS, "/readyz 503 on every replica while PostgreSQL is down");
    // The outage lasts 30 s from the stop, the wait for /readyz included.
    await faultMoment(Math.max(0, OUTAGE_MS - (Date.now() - outageStarted)));
    const outageExits = slots.filter((one) => one.child.process.exitCode !== null);
    expect(outageExits.map((one) => `${one.id}: ${one.child.stderr().slice(-800)}`)).toEqual([]);
    await server.restart();
    phase("PostgreSQL restarted");
    outagePolls.to = sim.truth.polls().length;
    const afterOutage = await cursors();
    const headAtRestart = sim.head();
    await waitFor(async () => [...(await cursors()).values()].every((c) => Number(c.block) >= headAtRestart), 90_000, "commits again after the outage");
    await allReadyz(200, 60_000, "/readyz 200 again");
    phase("committing and ready again");
    expect(afterOutage.size).toBe(4);

    // The end: the chain stops, the explorer and the webhook heal; everything up to the head is
    // delivered (what failed before waits out its backoff, so the drain still takes a while).
    clearInterval(miner);
    sim.setFaults({ serverErrorRate: 0, truncateRate: 0, malformedRate: 0, resetRate: 0 });
    hookFaults.failureRate = 0;
    const head = sim.head();
    await waitFor(async () => [...(await cursors()).values()].every((c) => Number(c.block) === head) && (await pendingCount()) === 0, 120_000, "every source at the head and the outbox delivered");
    phase("every source at the head, the outbox delivered");
    for (const one of slots) one.child.process.kill("SIGTERM");
    await Promise.all(slots.map((one) => one.child.exited));

    const final = await cursors();
    const expected: ExpectedRule[] = RULES.map((rule) => {
      const cursor = [...final.values()].find((c) => c.watch === rule.watch && c.source === rule.family);
      const normalize = NORMALIZERS[rule.family] as (data: never) => { key: string; block: number };
      const records = new Map(rule.truth(sim, { from: first, to: Number(cursor?.block ?? first - 1) }).map((r) => normalize(r as never)).map((r) => [r.key, r.block] as const));
      return { rule: rule.name, sinks: ["hook"], records };
    });
    const verdict = judge(expected, { hook: hook.received });
    const doubles = doublePolls(sim.truth.polls(), killedAt, outagePolls);
    const total = expected.reduce((sum, rule) => sum + rule.records.size, 0);
    const faults = sim.stats().faults;
    console.log(
      `replica chaos (seed ${SEED}): ${kills + 1} SIGKILLs (the ${kills} of the chaos in ${(chaosMs / 1000).toFixed(1)} s), ${incarnations.length} replica processes, ${total} expected alerts, delivered ${verdict.sinks.hook?.distinct}, lost ${verdict.lost}, gaps ${verdict.gaps}, ` +
        `duplicates under the same id ${verdict.duplicatesSameId}, under a new id ${verdict.duplicatesNewId}; windows re-fetched after their poller was killed ${doubles.refetchedAfterKill}, after the outage ${doubles.refetchedAfterOutage}, after a faulty answer ${doubles.refetchedAfterFault}, polled by two live replicas ${doubles.byTwoLive}; ` +
        `explorer faults ${JSON.stringify(faults)}, webhook faults ${JSON.stringify(hook.faults)}; ${((Date.now() - testStarted) / 1000).toFixed(0)} s in all`,
    );
    // For a window polled by two live replicas: what their lease keepers, ticks and commits said
    // (the lease changes, every warning and error: a failed tick or write).
    const involved = new Set(doubles.examples.flatMap((example) => [...example.matchAll(/(r\d+) \(#/g)].map((m) => m[1])));
    const leaseLines = incarnations
      .filter((one) => involved.has(one.id))
      .map((one) => `${one.id}: ${one.child.stderr().split("\n").filter((line) => /lease|fenced|"level":[45]0/i.test(line)).slice(-30).join("\n")}`);
    const context = JSON.stringify({ examples: verdict.examples, doubles: doubles.examples, leaseLines });
    expect(total, context).toBeGreaterThan(50);
    expect(verdict.lost, context).toBe(0);
    expect(verdict.gaps, context).toBe(0);
    expect(verdict.duplicatesNewId, context).toBe(0);
    expect(verdict.unexpected, context).toBe(0);
    expect(hook.badSignatures).toBe(0);
    expect(doubles.byTwoLive, context).toBe(0);
    // The faults happened: a run without them would prove nothing.
    expect(faults.serverError ?? 0).toBeGreaterThan(0);
    expect(Object.values(hook.faults).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 240_000);
});
