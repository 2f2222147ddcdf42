import type { Common } from "../common/common.js";
import { isStoreError } from "../store/errors.js";
import type { Store } from "../store/types.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import type { WatchedRecord } from "../model/record.js";
import type { SourceDefinition } from "./source.js";
import type { StartPosition } from "../model/start-position.js";
import { initialCursor } from "./start.js";
import { fetchWindow, type Paginate, type RecountPolicy } from "./fetch-window.js";
import { PROBES } from "./normalize.js";
import { createRuleMatcher, type Match, type SourceRule } from "./source-rule.js";

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
   */
  tick(head: number, signal: AbortSignal, lease?: { epoch?: number }): Promise<TickResult>;
}

export function createSourcePoller(common: Common, options: SourcePollerOptions): SourcePoller {
  const { source, store } = options;
  const labels = { watch: source.watch, source: source.key };
  // Fields on each line rather than a child logger: 10,000 pino children hold ~3.5 MB.
  const logger = common.logger;
  const perBlock = source.definition.operation === "blockInternalTransactions";
  const matcher = createRuleMatcher(source.rules);
  // Only records some rule matches are kept past their page (see fetchWindow's select).
  const select = (record: WatchedRecord) => matcher.some(record);

  async function ensureCursor(head: number): Promise<number> {
    const existing = await store.getCursor(source.key);
    if (existing) return existing.block;
    const block = initialCursor(source.start, head);
    // Persist the starting point at once: a crash before the first window must not move it to a later head.
    await store.setCursor({ key: source.key, watch: source.watch, source: source.family, description: source.description, block, updated_at: new Date(common.now()).toISOString() });
    logger.info({ ...labels, block_range: [block + 1, head] }, "source starts");
    return block;
  }

  async function tick(head: number, signal: AbortSignal, lease: { epoch?: number } = {}): Promise<TickResult> {
    // Read at every tick, never kept: with replicas another one may have moved it since.
    let cursor = await ensureCursor(head);
    const result: TickResult = { cursor, windows: 0, records: 0, alerts: 0 };
    const behind = head - cursor;
    if (behind > source.maxWindowBlocks) logger.info({ ...labels, block_range: [cursor + 1, head], blocks: behind }, "catching up");

    while (cursor < head) {
      signal.throwIfAborted();
      // A store that cannot write (a full disk, a read-only directory) keeps what follows in
      // memory only: scanning on would move the cursor ever further past what a restart
      // remembers. Retry the write first; while it fails, so does the tick, and the cursor stays.
      if ((await store.stats()).lastWriteFailed) await store.flush();
      const from = cursor + 1;
      const to = Math.min(head, cursor + source.maxWindowBlocks);
      const started = common.now();
      const chunks = fetchWindow(from, to, {
        paginate: options.paginate,
        normalize: options.normalize,
        probe: PROBES[source.family],
        pageSize: options.pageSize,
        perBlock,
        select,
        recount: options.recount,
        onRecount: (m) =>
          logger.warn({ ...labels, block_range: [m.from, m.to], attempt: m.attempt, total_count: m.reported, received: m.received }, "the explorer's total_count disagrees with the records it returned; fetching the blocks again"),
        signal,
      });
      for await (const chunk of chunks) {
        if (chunk.outside > 0) logger.warn({ ...labels, block_range: [chunk.from, chunk.to], count: chunk.outside }, "explorer returned records outside the requested range; ignored");
        const now = new Date(common.now());
        const matches = matcher.match(chunk.records, now);
        if (matches.length > 0 && options.enrich) await options.enrich(matches, signal);
        const entries = matches.flatMap(({ rule, alert }) => newOutboxEntries(alert, rule.notify, now));
        // Guarantee 1: the cursor moves only together with the alerts of the blocks it passes.
        let added: number;
        try {
          ({ added } = await store.commitWindow({
            cursor: { key: source.key, watch: source.watch, source: source.family, description: source.description, block: chunk.to, updated_at: now.toISOString() },
            entries,
            epoch: lease.epoch,
          }));
        } catch (error) {
          if (!isStoreError(error, "KW_STORE_LEASE_LOST")) throw error;
          // Another replica owns the source now and scans this window itself: not a failure.
          logger.info({ ...labels, block_range: [from, chunk.to], epoch: lease.epoch }, "the source's lease was lost; its window was left to the replica that took it over");
          result.cursor = cursor;
          return result;
        }
        if (added > 0) options.onAlerts?.();
        cursor = chunk.to;
        result.records += chunk.scanned;
        result.alerts += matches.length;
        common.metrics.sourceRecords.inc(labels, chunk.scanned);
        for (const { rule } of matches) common.metrics.ruleMatches.inc({ rule: rule.name });
      }
      result.windows += 1;
      logger.debug({ ...labels, block_range: [from, to], duration_ms: common.now() - started, head }, "window done");
    }
    // The cursor and lag gauges are read from the store when /metrics is scraped (daemon-status).
    result.cursor = cursor;
    return result;
  }

  return { source, tick };
}
