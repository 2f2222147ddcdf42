import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import { isStoreError } from "../store/errors.js";
import type { HeldLease } from "../store/ownership.js";
import type { Cursor, Store } from "../store/types.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import type { WatchedRecord } from "../model/record.js";
import { isPerBlockOperation, type SourceDefinition } from "./source.js";
import type { StartPosition } from "../model/start-position.js";
import { initialCursor } from "./start.js";
import { createProgress, type Progress, type ProgressTask } from "../common/progress.js";
import { fetchWindow, type Paginate, type RecountPolicy } from "./fetch-window.js";
import { PROBES } from "./normalize.js";
import { createRuleMatcher, type Match, type SourceRule } from "./source-rule.js";
import type { BlockTimeReader } from "../chain/block-time.js";
import type { LogFilter } from "../chain/get-logs.js";
import type { AbsenceState } from "../store/types.js";
import type { AlertDocument } from "../model/alert-document.js";
import { stepAbsence } from "./absence.js";
import { witnessesOf, witnessRoleOf, type AuditPlan } from "./audit-plan.js";
import { positionDescription } from "./move-cursor.js";
import { otherRole } from "../model/witness-role.js";
import type { FormerKeys } from "./plan.js";

/** A source as the engine runs it: one poll and one cursor, shared by its rules. */
export interface PlannedSource {
  key: string;
  definition: SourceDefinition;
  description: string;
  /** The watch whose schedule and start the source follows (the first, when several share it). */
  watch: string;
  family: WatchedRecord["family"];
  rules: SourceRule[];
  schedule: string;
  start: StartPosition;
  maxWindowBlocks: number;
  /** The watches it serves: each one's own source key, and the client-side filter of a shared source (absent: the watch's own source). */
  members?: SourceMember[];
  /** A node log source (nodeEventLogs, nodeNftTransfers): the log queries of its members, asked together each window. */
  logFilters?: readonly LogFilter[];
}

/** Every watch a source serves, the one it follows first: a watch sharing another's source is listed with it. */
export function watchesOf(source: Pick<PlannedSource, "watch" | "members">): string[] {
  return [...new Set([source.watch, ...(source.members ?? []).map((member) => member.watch)])];
}

/** A watch (one of its server-side queries) served by a source. */
export interface SourceMember {
  watch: string;
  /** The key of the watch's own source: where its position is kept while another source serves it. */
  ownKey: string;
  /** The client-side filter of a shared source, in words; absent on the watch's own source. */
  filter?: string;
  /**
   * Blocks up to this one were already processed for this watch (by the source that served
   * it before): its rules skip them while the source catches up. Set by the poller.
   */
  handover: { skipThrough: number };
}

export interface SourcePollerOptions {
  source: PlannedSource;
  store: Store;
  paginate: Paginate;
  normalize: (data: never) => WatchedRecord;
  pageSize: number;
  /** Extra lookups for matched records, before they are committed (enrichment). */
  enrich?: (matches: Match[], signal: AbortSignal) => Promise<void>;
  /** Called after a commit that added outbox entries (wakes the dispatcher). */
  onAlerts?: () => void;
  /** Fetching a range again when its records disagree with `total_count` (tests shorten the waits). */
  recount?: Partial<RecountPolicy>;
  /** Operation 8: blocks asked for at once (blocksInFlightFor the explorer's rate limit; default 1). */
  blocksInFlight?: number;
  /** Where the explorer stops counting; API_LIMITS.maxTotalCount by default (tests shrink it with the simulator's). */
  countCap?: number;
  /** Where a catch-up (more than one window behind) reports its progress; default: info logs every few seconds. */
  progress?: Progress;
  /**
   * The timestamp of a block, for the source's absence rules (`expect`), which count in
   * block time: required when it has any (docs/absence.md).
   */
  blockTime?: BlockTimeReader;
  /**
   * The plan's audit of `source: both` watches (planAudit): each window writes, with its
   * cursor, a witness of every alert it found for an audited watch, as this source's reader
   * (the node's for a node operation, else the explorer's). Absent or empty: none.
   */
  audit?: AuditPlan;
  /** Where a watch's positions are kept under the other reader (Plan.formerKeys): where a watch switched between them starts. */
  formerKeys?: FormerKeys;
}

export interface TickResult {
  /** The cursor after the tick. */
  cursor: number;
  windows: number;
  records: number;
  alerts: number;
}

export interface SourcePoller {
  readonly source: PlannedSource;
  /**
   * Process every block up to `head`, window after window, committing each. With a lease
   * `epoch` (replicas) every commit is fenced by it: once another replica has taken the
   * source over, the refused commit ends the tick (nothing was written) without an error.
   * The lease's `signal` (which `signal` must follow) ends the tick the same way when it
   * aborts: the window in flight is left, uncommitted, to the replica that takes it over.
   * Its `stopping` ends the tick after the window in flight is committed (a handover).
   */
  tick(head: number, signal: AbortSignal, lease?: HeldLease): Promise<TickResult>;
}

export function createSourcePoller(common: Common, options: SourcePollerOptions): SourcePoller {
  const { source, store } = options;
  const labels = { watch: source.watch, source: source.key };
  // Fields on each line rather than a child logger: 10,000 pino children hold ~3.5 MB.
  const logger = common.logger;
  const perBlock = isPerBlockOperation(source.definition.operation);
  const matcher = createRuleMatcher(source.rules);
  const progress = options.progress ?? createProgress({ now: common.now, logger });
  // Only records some rule matches are kept past their page (see fetchWindow's select).
  const select = (record: WatchedRecord) => matcher.some(record);
  const absenceRules = source.rules.filter((rule) => rule.absence !== undefined);
  const role = witnessRoleOf(source.definition.operation);
  if (absenceRules.length > 0 && options.blockTime === undefined) throw new TypeError(`source ${source.key} has absence rules but no block time reader`);

  // Members whose position is kept under their own source's key (the source serves them shared).
  const handedOver = (source.members ?? []).filter((m) => m.ownKey !== source.key);
  // The generation of this source's followers as this poller last made them (Store.followCursor).
  let followers: number | undefined;

  /**
   * The handover rule (docs/credits-and-planner.md, "Changing the plan"): a source starts at the lowest position
   * of the watches it serves, each watch's position being the cursor under its own source's
   * key, and each watch skips the blocks it has already had. So a source replaced by another
   * hands over its position: no block is skipped, and none is scanned twice for the same watch.
   * While the source serves them, those positions follow its cursor (Cursor.follows): its
   * commits move them all, at no cost per watch, and a later plan reads them where they are.
   */
  /**
   * Where a watch without a position under `ownKey` left off under the other reader (a watch
   * switched from the explorer to the node, or back): the lowest of its positions there, or
   * undefined when it kept none under one of them. So the switch skips no block
   * (docs/configuration.md, "Switching a watch's source").
   */
  async function formerPosition(watch: string, ownKey: string): Promise<number | undefined> {
    const keys = options.formerKeys?.(watch, source.family, otherRole(role)).filter((key) => key !== ownKey) ?? [];
    if (keys.length === 0) return undefined;
    const cursors = await Promise.all(keys.map((key) => store.getCursor(key)));
    let lowest = Infinity;
    for (const cursor of cursors) {
      if (cursor === undefined) return undefined;
      lowest = Math.min(lowest, cursor.block);
    }
    return lowest;
  }

  async function ensureCursor(head: number): Promise<number> {
    // Read at every tick, never kept: with replicas another one may have moved it since.
    const existing = await store.getCursor(source.key);
    // The positions are as this poller left them (nobody has changed who follows, or from where,
    // since): each is at or past the cursor, and each watch's skip is the one it has. A source
    // that never had followers has none to check; one that had, and serves none now, lets them go.
    if (existing !== undefined && existing.follows === undefined && existing.followers === followers && (followers !== undefined || handedOver.length === 0)) return existing.block;
    const members = source.members ?? [];
    // All at once: on PostgreSQL reads asked for together share one query.
    const own = await Promise.all(members.map(async (m) => (m.ownKey === source.key ? existing : await store.getCursor(m.ownKey))?.block ?? (await formerPosition(m.watch, m.ownKey))));
    const start = existing?.block ?? (members.length === 0 ? await formerPosition(source.watch, source.key) : undefined) ?? initialCursor(source.start, head);
    let block: number | undefined;
    for (const [i, member] of members.entries()) {
      // A watch without a position (new, or never served apart) starts where the source does.
      member.handover.skipThrough = own[i] ?? start;
      block = Math.min(block ?? Infinity, member.handover.skipThrough);
    }
    // The lowest position, even when the stored cursor is older (a source used in an earlier plan).
    block ??= start;
    const at = new Date(common.now()).toISOString();
    // The positions first, each where it is: the source's cursor going back below them then moves none of them back.
    if (handedOver.length > 0 || existing?.followers !== undefined) {
      ({ generation: followers } = await store.followCursor({ source: source.key, followers: positionsOf(source, handedOver, at) }));
    }
    // A source's own cursor follows nothing (one that followed another in an earlier plan is written as it reads).
    if (existing && existing.block === block && existing.follows === undefined) return block;
    // Persist the starting point at once: a crash before the first window must not move it to a later head.
    await store.setCursor({ key: source.key, watch: source.watch, source: source.family, description: source.description, block, updated_at: at });
    logger.info({ ...labels, block_range: [block + 1, head], handed_over: existing ? undefined : handedOver.length || undefined }, existing ? "source resumes at the lowest position of its watches" : "source starts");
    return block;
  }

  /**
   * The absence rules' steps over one chunk: their states after it, the ones to write with
   * its cursor (a state changed, or the window's end), and the alerts they decided (docs/absence.md).
   */
  async function stepAbsences(states: Map<string, AbsenceState>, chunk: { from: number; to: number }, evaluate: boolean, matches: readonly Match[], now: Date, signal: AbortSignal) {
    const after: AbsenceState[] = [];
    const writes: AbsenceState[] = [];
    const alerts: Array<{ rule: SourceRule; alert: AlertDocument }> = [];
    for (const rule of absenceRules) {
      const counted = new Map<number, number>();
      for (const match of matches) if (match.rule.name === rule.name) counted.set(match.alert.block, (counted.get(match.alert.block) ?? 0) + 1);
      const outcome = await stepAbsence(rule.absence!, states.get(rule.name), { ...chunk, evaluate, matches: counted }, options.blockTime!, now, signal);
      after.push(outcome.state);
      if (outcome.write) writes.push(outcome.state);
      if (outcome.alert !== undefined) alerts.push({ rule, alert: outcome.alert });
    }
    return { after, writes, alerts };
  }

  async function tick(head: number, signal: AbortSignal, lease: HeldLease = {}): Promise<TickResult> {
    let cursor = await ensureCursor(head);
    // Read at every tick, as the cursor is: another replica may have gone on with them.
    const absences = new Map<string, AbsenceState>(absenceRules.length === 0 ? [] : (await store.listAbsences(absenceRules.map((r) => r.name))).map((state) => [state.rule, state]));
    const result: TickResult = { cursor, windows: 0, records: 0, alerts: 0 };
    const behind = head - cursor;
    let catchUp: ProgressTask | undefined;
    if (behind > source.maxWindowBlocks) {
      logger.info({ ...labels, block_range: [cursor + 1, head], blocks: behind }, "catching up");
      catchUp = progress.start({ label: "catching up", total: behind, fields: labels });
    }

    try {
    while (cursor < head) {
      signal.throwIfAborted();
      // Handed over to a replica that joined: the windows so far are committed, the rest is its.
      if (lease.stopping?.aborted === true) {
        logger.info({ ...labels, block_range: [cursor + 1, head], epoch: lease.epoch }, "the source's lease is handed over to another replica; it goes on from the last committed window");
        break;
      }
      // A store that cannot write (a full disk, a read-only directory) keeps what follows in
      // memory only: scanning on would move the cursor ever further past what a restart
      // remembers. Retry the write first; while it fails, so does the tick, and the cursor stays.
      // (writeFailing(), not stats(): on PostgreSQL stats() sizes and counts the whole database.)
      if (store.writeFailing()) await store.flush();
      const from = cursor + 1;
      const to = Math.min(head, cursor + source.maxWindowBlocks);
      const started = common.now();
      const chunks = fetchWindow(from, to, {
        paginate: options.paginate,
        normalize: options.normalize,
        probe: PROBES[source.family],
        pageSize: options.pageSize,
        perBlock,
        blocksInFlight: options.blocksInFlight,
        countCap: options.countCap,
        select,
        recount: options.recount,
        onRecount: (m) =>
          m.servedTo !== undefined
            ? logger.warn({ ...labels, block_range: [m.from, m.to], attempt: m.attempt, served_to: m.servedTo }, "the explorer answered for part of the window only (it has not indexed the rest); fetching the blocks again")
            : logger.warn({ ...labels, block_range: [m.from, m.to], attempt: m.attempt, total_count: m.reported, received: m.received }, "the explorer's total_count disagrees with the records it returned; fetching the blocks again"),
        signal,
      });
      for await (const chunk of chunks) {
        if (chunk.outside > 0) logger.warn({ ...labels, block_range: [chunk.from, chunk.to], count: chunk.outside }, "explorer returned records outside the requested range; ignored");
        const now = new Date(common.now());
        const all = matcher.match(chunk.records, now);
        // An absence rule's matches are counted, not sent.
        const matches = absenceRules.length === 0 ? all : all.filter((m) => m.rule.absence === undefined);
        if (matches.length > 0 && options.enrich) await options.enrich(matches, signal);
        const entries = matches.flatMap(({ rule, alert }) => newOutboxEntries(alert, rule.notify, now));
        const absent = absenceRules.length === 0 ? undefined : await stepAbsences(absences, { from: chunk.from, to: chunk.to }, chunk.to === to, all, now, signal);
        for (const { rule, alert } of absent?.alerts ?? []) entries.push(...newOutboxEntries(alert, rule.notify, now));
        const witnesses = witnessesOf(options.audit, role, source.family, matches, now);
        // Guarantee 1: the cursor moves only together with the alerts of the blocks it passes.
        let added: number;
        try {
          ({ added } = await store.commitWindow({
            cursor: { key: source.key, watch: source.watch, source: source.family, description: source.description, block: chunk.to, updated_at: now.toISOString() },
            entries,
            epoch: lease.epoch,
            ...(absent === undefined || absent.writes.length === 0 ? {} : { absences: absent.writes }),
            ...(witnesses.length === 0 ? {} : { witnesses }),
          }));
        } catch (error) {
          if (!isStoreError(error, "KW_STORE_LEASE_LOST")) throw error;
          // Another replica owns the source now and scans this window itself: not a failure.
          logger.info({ ...labels, block_range: [from, chunk.to], epoch: lease.epoch }, "the source's lease was lost; its window was left to the replica that took it over");
          result.cursor = cursor;
          return result;
        }
        if (added > 0) options.onAlerts?.();
        // Also the states not written: what a later chunk of this tick goes on from.
        for (const state of absent?.after ?? []) absences.set(state.rule, state);
        for (const { alert } of absent?.alerts ?? []) logger.info({ ...labels, rule: alert.rule, status: alert.status, id: alert.id, block: alert.block }, alert.summary);
        catchUp?.advance(chunk.to - cursor);
        cursor = chunk.to;
        result.records += chunk.scanned;
        result.alerts += matches.length;
        common.metrics.sourceRecords.inc(labels, chunk.scanned);
        // An absence rule's matches too: a keeper's pace shows in the metric.
        for (const { rule } of all) common.metrics.ruleMatches.inc({ rule: rule.name });
      }
      result.windows += 1;
      logger.debug({ ...labels, block_range: [from, to], duration_ms: common.now() - started, head }, "window done");
    }
    } catch (error) {
      // The lease ended mid-window (taken over, or lapsed): its requests stopped, and the
      // replica that takes the source over polls the window. As a refused commit: not a failure.
      if (lease.signal?.aborted !== true) throw error;
      logger.info({ ...labels, block_range: [cursor + 1, head], epoch: lease.epoch, reason: describeError(lease.signal.reason) }, "the source's lease ended during the tick; its window was left to the replica that takes it over");
      result.cursor = cursor;
      return result;
    } finally {
      catchUp?.end();
    }
    // The cursor and lag gauges are read from the store when /metrics is scraped (daemon-status).
    result.cursor = cursor;
    return result;
  }

  return { source, tick };
}

/** The positions of a shared source's watches, each where its handover is, for Store.followCursor. */
function positionsOf(source: PlannedSource, members: readonly SourceMember[], at: string): Cursor[] {
  const description = positionDescription(source.key);
  return members.map((m) => ({ key: m.ownKey, watch: m.watch, source: source.family, description, block: m.handover.skipThrough, updated_at: at }));
}
