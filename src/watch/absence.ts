import type { BlockTimeReader } from "../chain/block-time.js";
import { formatDuration } from "../common/duration.js";
import { ALERT_DOCUMENT_VERSION, type AlertDocument, type AlertSeverity } from "../model/alert-document.js";
import { resolvedAlertId } from "../model/alert-status.js";
import type { RecordFamily } from "../model/record.js";
import { alertId } from "../rules/build-alert.js";
import type { AbsenceState, BlockTime } from "../store/types.js";

/** What a rule's `expect` asks, with what its alerts need to say where they come from. */
export interface AbsenceSpec {
  atLeast: number;
  withinMs: number;
  family: RecordFamily;
  network: string;
  explorerUrl: string;
  /** The watched account or contract, for the alert's link. */
  subject?: { kind: "account" | "contract"; address: string };
  severity?: AlertSeverity;
  /** The rule's alert labels (routes and inhibition match on them), as its other alerts carry. */
  labels?: Record<string, string>;
}

/** An absence rule as a source runs it (see SourceRule.absence). */
export interface AbsenceRule {
  name: string;
  watch: string;
  spec: AbsenceSpec;
}

/** One observed range of blocks of a source, with the blocks of the rule's matches in it and how many each. */
export interface AbsenceStep {
  from: number;
  to: number;
  /** True where the window ends: the rule is evaluated there (the block time of `to` is read). */
  evaluate: boolean;
  matches: ReadonlyMap<number, number>;
}

export interface AbsenceOutcome {
  /** The state after the step (unchanged: the one given). */
  state: AbsenceState;
  /** Whether it must be written with the step's cursor advance. */
  write: boolean;
  /** The firing or resolved alert the step decided, if any. */
  alert?: AlertDocument;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * One step of an absence rule (docs/absence.md): the matches of blocks [from, to] are
 * counted by their block's timestamp, and at the end of a window the rule is evaluated at
 * T, the block time of `to`: the window [T − within, T] is complete once the cursor has
 * passed `to`, so fewer than `at_least` records in it is an absence, whatever the wall
 * clock says (a daemon that was down, or is catching up, sees the blocks' own times).
 *
 * - No alert before a whole window of block time was observed after `since` (a new rule,
 *   a source that starts at `latest`, or blocks the rule did not see).
 * - Blocks at or below `through` were observed already (a rewind re-scans them): neither
 *   counted again nor evaluated.
 * - Blocks skipped past `through` (a cursor moved forward, a rule added to a running
 *   source) were not observed: observation starts again after them.
 * - The firing alert's id is derived from the rule and the block it was decided at, and
 *   kept in the state, written in the same commit as the cursor: every later step, on any
 *   replica after any restart, goes on with that episode; the resolve is `<id>:resolved`.
 */
export async function stepAbsence(rule: AbsenceRule, stored: AbsenceState | undefined, step: AbsenceStep, readTime: BlockTimeReader, now: Date, signal: AbortSignal): Promise<AbsenceOutcome> {
  const { spec } = rule;
  let state: AbsenceState;
  let write = false;
  // Nothing observed before `from`, a gap since, or a rule that now expects more records
  // than were kept for it: observation starts at from − 1. The recent matches stay: they
  // are real, and only ever count against an absence.
  if (stored === undefined || step.from > stored.through + 1 || stored.at_least < spec.atLeast) {
    // Past what was observed already: a rewind's re-scan is not counted again.
    const through = Math.max(step.from - 1, stored?.through ?? -1);
    const since = { block: through, time: await readTime(through, signal) };
    state = { rule: rule.name, since, through, recent: stored?.recent ?? [], at_least: spec.atLeast, episode: stored?.episode ?? null };
    write = true;
  } else {
    state = stored.at_least === spec.atLeast ? stored : { ...stored, at_least: spec.atLeast };
  }
  if (step.to <= state.through) return { state, write };

  const fresh = [...step.matches].filter(([block, count]) => block > state.through && block <= step.to && count > 0).sort(([a], [b]) => a - b);
  if (fresh.length > 0) {
    const recent = keepNewest([...state.recent.map((r) => ({ ...r })), ...fresh.map(([block, count]) => ({ block, time: Number.NaN, count }))], spec.atLeast);
    // Times are read for the matches kept only: a busy contract costs at most at_least reads a window.
    for (const entry of recent) if (Number.isNaN(entry.time)) entry.time = await readTime(entry.block, signal);
    state = { ...state, recent };
    write = true;
  }
  state = { ...state, through: step.to };
  if (!step.evaluate) return { state, write };

  // The window's end: the through block is written with the cursor from here on.
  write = true;
  const at = await readTime(step.to, signal);
  const within = Math.floor(spec.withinMs / 1000);
  const start = at - within;
  const seen = state.recent.filter((r) => r.time >= start && r.block <= step.to).reduce((n, r) => n + r.count, 0);
  const observed = state.since.time <= start;
  let alert: AlertDocument | undefined;
  if (state.episode === null && observed && seen < spec.atLeast) {
    const window = await windowOf(state, { block: step.to, time: at }, start, readTime, signal);
    alert = absenceAlert(rule, { status: "firing", id: alertId(rule.name, `absence:${step.to}`), window, seen, state, now });
    state = { ...state, episode: alert };
  } else if (state.episode !== null && seen >= spec.atLeast) {
    const window = await windowOf(state, { block: step.to, time: at }, start, readTime, signal);
    alert = absenceAlert(rule, { status: "resolved", id: resolvedAlertId(state.episode.id), window, seen, state, now });
    state = { ...state, episode: null };
  }
  return { state, write, ...(alert === undefined ? {} : { alert }) };
}

/** The newest entries holding at least `atLeast` records, oldest first (one entry per block). */
function keepNewest(entries: Array<BlockTime & { count: number }>, atLeast: number): Array<BlockTime & { count: number }> {
  const byBlock = new Map<number, BlockTime & { count: number }>();
  for (const entry of entries) {
    const known = byBlock.get(entry.block);
    if (known === undefined) byBlock.set(entry.block, entry);
    else known.count += entry.count;
  }
  const sorted = [...byBlock.values()].sort((a, b) => a.block - b.block);
  let held = 0;
  let first = sorted.length;
  while (first > 0 && held < atLeast) held += (sorted[--first] as { count: number }).count;
  return sorted.slice(first);
}

interface AbsenceWindow {
  from_block: number;
  to_block: number;
  from: string;
  to: string;
}

/**
 * The window [start, end.time] in blocks: its last block is the evaluated one, its first
 * the first block at or after `start`, found by bisection between a block known to be
 * before it (where observation began, or a kept match older than the window) and the end,
 * starting from a guess of one block a second (Kaia's pace): a few reads, on an alert only.
 */
async function windowOf(state: AbsenceState, end: BlockTime, start: number, readTime: BlockTimeReader, signal: AbortSignal): Promise<AbsenceWindow> {
  let lo = state.since;
  for (const r of state.recent) if (r.time < start && r.block > lo.block && r.block <= end.block) lo = r;
  let first: number;
  if (lo.time >= start) first = lo.block;
  else {
    // time(low) < start <= time(high)
    let low = lo.block;
    let high = end.block;
    let guess = end.block - (end.time - start);
    while (high - low > 1) {
      const mid = guess > low && guess < high ? guess : Math.floor((low + high) / 2);
      guess = Number.NaN;
      if ((await readTime(mid, signal)) >= start) high = mid;
      else low = mid;
    }
    first = high;
  }
  return { from_block: first, to_block: end.block, from: iso(start), to: iso(end.time) };
}

interface AbsenceAlertInput {
  status: "firing" | "resolved";
  id: string;
  window: AbsenceWindow;
  seen: number;
  state: AbsenceState;
  now: Date;
}

const records = (n: number) => (n === 1 ? "1 matching record" : `${n} matching records`);

/** The alert document of an absence (or of its end): the rule, what it expects, what it saw, and where. */
export function absenceAlert(rule: AbsenceRule, input: AbsenceAlertInput): AlertDocument {
  const { spec } = rule;
  const base = spec.explorerUrl.replace(/\/+$/, "");
  const within = formatDuration(spec.withinMs);
  const last = [...input.state.recent].reverse().find((r) => r.block <= input.window.to_block);
  const lastText = last === undefined ? "none seen since block " + String(input.state.since.block) : `last at block ${last.block}`;
  const summary =
    input.status === "firing"
      ? `${input.seen === 0 ? "no matching record" : `only ${records(input.seen)}`} in the ${within} to block ${input.window.to_block}, expected at least ${spec.atLeast} (${lastText})`
      : `resolved: ${records(input.seen)} in the ${within} to block ${input.window.to_block}, at least ${spec.atLeast} expected`;
  const links: AlertDocument["links"] = { block: `${base}/block/${input.window.to_block}` };
  if (spec.subject !== undefined) links[spec.subject.kind] = `${base}/account/${encodeURIComponent(spec.subject.address)}`;
  return {
    version: ALERT_DOCUMENT_VERSION,
    id: input.id,
    rule: rule.name,
    watch: rule.watch,
    source: spec.family,
    network: spec.network,
    block: input.window.to_block,
    transaction_hash: null,
    datetime: input.window.to,
    summary,
    links,
    record: {
      expect: { at_least: spec.atLeast, within },
      seen: input.seen,
      window: input.window,
      last_seen: last === undefined ? null : { block: last.block, datetime: iso(last.time) },
      observed_since: { block: input.state.since.block, datetime: iso(input.state.since.time) },
    },
    status: input.status,
    ...(spec.severity === undefined ? {} : { severity: spec.severity }),
    ...(spec.labels === undefined ? {} : { labels: spec.labels }),
    created_at: input.now.toISOString(),
  };
}
