import { OPERATIONS } from "../explorer/operations.js";
import { isNodeLogOperation, isNodeOperation, isPerBlockOperation } from "./source.js";
import type { AlertDocument } from "../model/alert-document.js";
import { newOutboxEntries, type OutboxEntry } from "../model/outbox-entry.js";
import { fetchWindow, type Paginate } from "./fetch-window.js";
import type { Progress } from "../common/progress.js";
import type { PlannedSource } from "./poller.js";
import type { WatchedRecord } from "../model/record.js";
import { matchRecords, type Match, type SourceRule } from "./source-rule.js";

/** A block range, both ends inclusive. */
export interface BlockSpan {
  from: number;
  to: number;
}

export interface ReplayOptions {
  /** The sources of the replayed rule, planned as the daemon plans them (with only that rule). */
  sources: readonly PlannedSource[];
  /** The explorer query of a source, as the daemon pages it. */
  paginate: (source: PlannedSource) => Paginate;
  normalize: (source: PlannedSource) => (data: never) => WatchedRecord;
  pageSize: number;
  from: number;
  to: number;
  /** The daemon's enrichment step, when the rule asks for lookups. */
  enrich?: (matches: Match[], signal: AbortSignal) => Promise<void>;
  /** Called for each match as soon as its window is done (to print while the replay runs). */
  onMatch?: (match: ReplayMatch) => void;
  /** Where each source's walk over the range reports its progress (blocks done, rate, time left). */
  progress?: Progress;
  now: () => number;
  signal: AbortSignal;
}

export interface ReplayMatch {
  source: PlannedSource;
  rule: SourceRule;
  alert: AlertDocument;
}

export interface ReplayResult {
  windows: number;
  pages: number;
  records: number;
  /** Records the API returned twice or outside the window: dropped, as the daemon drops them. */
  duplicates: number;
  outside: number;
  matches: ReplayMatch[];
}

export interface ReplayEstimate {
  /** A lower bound: one page per window (a dense window takes more pages, or is split). */
  credits: number;
  windows: number;
  bySource: Array<{ source: PlannedSource; windows: number; costPerPage: number; credits: number }>;
}

/** The windows a source walks over [from, to]: the poller's steps from a cursor at from - 1. */
export function replayWindows(span: BlockSpan, maxWindowBlocks: number): BlockSpan[] {
  const windows: BlockSpan[] = [];
  for (let cursor = span.from - 1; cursor < span.to; ) {
    const to = Math.min(span.to, cursor + maxWindowBlocks);
    windows.push({ from: cursor + 1, to });
    cursor = to;
  }
  return windows;
}

/** Credits a replay costs at the least: windows × one page × the operation's cost (operation 8: one call per block). */
export function estimateReplayCredits(sources: readonly PlannedSource[], span: BlockSpan): ReplayEstimate {
  const bySource = sources.map((source) => {
    const operation = source.definition.operation;
    const windows = isPerBlockOperation(operation) ? span.to - span.from + 1 : replayWindows(span, source.maxWindowBlocks).length;
    // The node's transactions cost requests at chain.rpc_url, not credits.
    const costPerPage = isNodeOperation(operation) ? 0 : OPERATIONS[operation].cost;
    return { source, windows, costPerPage, credits: windows * costPerPage };
  });
  return {
    credits: bySource.reduce((sum, s) => sum + s.credits, 0),
    windows: bySource.reduce((sum, s) => sum + s.windows, 0),
    bySource,
  };
}

/**
 * Runs a rule's sources over a past block range exactly as the poller does (the same
 * windows, fetchWindow's paging, splitting, sorting and deduplication, the same compiled
 * rule and enrichment) but commits nothing: no cursor moves and no alert is queued.
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
  const result: ReplayResult = { windows: 0, pages: 0, records: 0, duplicates: 0, outside: 0, matches: [] };
  for (const source of options.sources) {
    const perBlock = isPerBlockOperation(source.definition.operation);
    const task = options.progress?.start({ label: "replay", total: options.to - options.from + 1, fields: { watch: source.watch, source: source.key } });
    try {
    for (const window of replayWindows(options, source.maxWindowBlocks)) {
      options.signal.throwIfAborted();
      const chunks = fetchWindow(window.from, window.to, {
        paginate: options.paginate(source),
        normalize: options.normalize(source),
        pageSize: options.pageSize,
        perBlock,
        // A node log query answers a window on one page: the explorer's count cap is not its.
        ...(isNodeLogOperation(source.definition.operation) ? { countCap: Infinity } : {}),
        signal: options.signal,
      });
      for await (const chunk of chunks) {
        task?.advance(chunk.to - chunk.from + 1);
        const matches = matchRecords(chunk.records, source.rules, new Date(options.now()));
        if (matches.length > 0 && options.enrich) await options.enrich(matches, options.signal);
        result.pages += chunk.pages;
        result.records += chunk.records.length;
        result.duplicates += chunk.duplicates;
        result.outside += chunk.outside;
        for (const { rule, alert } of matches) {
          const match: ReplayMatch = { source, rule, alert };
          result.matches.push(match);
          options.onMatch?.(match);
        }
      }
      result.windows += 1;
    }
    } finally {
      task?.end();
    }
  }
  return result;
}

/** The outbox entries of matches, one per sink of the rule, as the poller writes them. */
export function outboxEntriesOf(matches: readonly ReplayMatch[], now: Date): OutboxEntry[] {
  return matches.flatMap(({ rule, alert }) => newOutboxEntries(alert, rule.notify, now));
}
