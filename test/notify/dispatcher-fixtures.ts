import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { createTestCommon, type Common } from "../../src/common/common.js";
import { SinkError, type Delivery, type Sink } from "../../src/notify/sink.js";
import { openSqliteStore } from "../../src/store/open-store.js";
import type { SqliteStore } from "../../src/store/sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import type { OutboxEntry } from "../../src/model/outbox-entry.js";
import type { AdmissionInput, DispatcherRule } from "../../src/notify/admission.js";
import { ALERT_DOCUMENT_VERSION, type AlertDocument } from "../../src/model/alert-document.js";
import { waitFor } from "../helpers/wait-for.js";

export interface Call {
  id: string;
  attempt: number;
  alertIds: string[];
  startedAt: number;
  endedAt?: number;
}

/**
 * A sink for the dispatcher's own logic: records every send (with monotonic start and end
 * times and the number in flight) and behaves as `behaviour` says for the n-th call (0-based).
 */
export class TestSink implements Sink {
  readonly type = "test";
  readonly calls: Call[] = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(
    readonly name: string,
    private readonly behaviour: (delivery: Delivery, call: number, signal: AbortSignal) => Promise<void> | void = () => undefined,
  ) {}

  async send(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const call: Call = { id: delivery.id, attempt: delivery.attempt, alertIds: delivery.alerts.map((a) => a.id), startedAt: performance.now() };
    const index = this.calls.length;
    this.calls.push(call);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.behaviour(delivery, index, signal);
    } finally {
      this.inFlight--;
      call.endedAt = performance.now();
    }
  }

  /** Alert ids accepted (the calls that did not throw), for "once per id" checks. */
  delivered: string[] = [];
}

/** Wraps a TestSink behaviour so that successful sends are listed in `sink.delivered`. */
export function recording(name: string, behaviour?: (delivery: Delivery, call: number, signal: AbortSignal) => Promise<void> | void): TestSink {
  const sink: TestSink = new TestSink(name, async (delivery, call, signal) => {
    await behaviour?.(delivery, call, signal);
    sink.delivered.push(...delivery.alerts.map((a) => a.id));
  });
  return sink;
}

export const transient = (message = "receiver answered 503", retryAfterMs?: number) =>
  new SinkError("KW_NOTIFY_HTTP", message, retryAfterMs === undefined ? { permanent: false } : { permanent: false, retryAfterMs });
export const permanent = (message = "receiver answered 400") => new SinkError("KW_NOTIFY_HTTP", message, { permanent: true });

/** A wait that ends with the signal (a hung receiver that at least honours abort). */
export function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }));
}

/**
 * Waits until `check` holds: the dispatcher runs on its own timers, which these tests do not
 * step, so it is polled like a server (test/helpers/wait-for.ts), with a generous deadline.
 */
export function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  return waitFor(check, timeoutMs, what);
}

export interface TestEnv {
  dir: string;
  path: string;
  common: Common;
  /** Added to Date.now() by common.now(): lets a test move past a cooldown or a retention. */
  clock: { offsetMs: number };
  logLines: string[];
  /** The file store (its silences are `store.silences`). */
  store: SqliteStore;
  reopen(): Promise<SqliteStore>;
  cleanup(): Promise<void>;
}

export async function createEnv(): Promise<TestEnv> {
  const dir = await mkdtemp(join(tmpdir(), "kaiawatch-dispatcher-"));
  const path = join(dir, "store.json");
  const clock = { offsetMs: 0 };
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      callback();
    },
  });
  const common = createTestCommon({ now: () => Date.now() + clock.offsetMs, logger: pino({ level: "info" }, destination) });
  const env: TestEnv = {
    dir,
    path,
    common,
    clock,
    logLines,
    store: await openSqliteStore(common, { path }),
    async reopen() {
      await env.store.close();
      env.store = await openSqliteStore(common, { path });
      return env.store;
    },
    async cleanup() {
      await env.store.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
}

export function alert(id: string, rule: string, record: unknown = {}, createdAt = new Date().toISOString()): AlertDocument {
  return {
    version: ALERT_DOCUMENT_VERSION,
    id,
    rule,
    watch: "w",
    source: "nft_transfers",
    network: "kairos",
    block: 100,
    transaction_hash: null,
    datetime: null,
    summary: `alert ${id}`,
    links: {},
    record,
    created_at: createdAt,
  };
}

export function entry(alertId: string, sink: string, rule = "r", options: { record?: unknown; createdAt?: string } = {}): OutboxEntry {
  const created = options.createdAt ?? new Date().toISOString();
  return {
    id: `${alertId}:${sink}`,
    alert: alert(alertId, rule, options.record, created),
    sink,
    rule,
    state: "pending",
    attempts: 0,
    created_at: created,
    next_attempt_at: created,
  };
}

let block = 0;
/** Puts entries into the outbox the way the watch engine does (one atomic commit). */
export async function commit(store: Store, entries: OutboxEntry[]): Promise<void> {
  block += 1;
  await store.commitWindow({ cursor: { key: "test", watch: "w", source: "nft_transfers", description: "test", block, updated_at: new Date().toISOString() }, entries });
}

export function counter(common: Common, name: keyof Common["metrics"], labels: Record<string, string>): Promise<number> {
  const metric = common.metrics[name] as unknown as { get(): Promise<{ values: Array<{ labels: Record<string, string | number>; value: number }> }> };
  return metric.get().then(({ values }) => values.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val)).reduce((sum, v) => sum + v.value, 0));
}

/**
 * One pass of admission for sink `out` at `now`: nothing in flight, no silence, no cooldown
 * active, groups not flushed; a test overrides what it is about (routes, a cooldown view …).
 */
export function admissionInput(due: OutboxEntry[], rules: DispatcherRule[], now: number, overrides: Partial<AdmissionInput> = {}): AdmissionInput {
  return {
    sink: "out",
    due,
    inFlight: new Set(),
    rules: new Map(rules.map((rule) => [rule.name, rule])),
    silences: [],
    cooldown: { isActive: () => false },
    flushGroups: false,
    now,
    ...overrides,
  };
}
