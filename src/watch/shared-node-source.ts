import type { RecordFamily, WatchedRecord } from "../model/record.js";
import { narrowRule } from "./choose-sources.js";
import type { IndexedBy } from "./index-by.js";
import type { PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource, SourceMember } from "./poller.js";
import { firingsOfDay, planningDayStart } from "./schedule-firings.js";
import type { SourceRule } from "./source-rule.js";
import { describeSource, sourceKey, type SourceDefinition } from "./source.js";

/** One watch's part in a node source that serves many watches at once. */
export interface NodeShare<R, W> {
  watch: W;
  rules: readonly R[];
  /** The key its position is kept under, and what its rules are compiled for. */
  own: SourceDefinition;
  /** The records its own query would return, of all the source reads; absent: all of them. */
  filter?: (record: WatchedRecord) => boolean;
  filterText: string;
  /**
   * What the filter and the share's rules together imply (its contract, or the account a
   * record is from or to): the rule index files the rules under it, so that a record meets
   * the rules of its own watches, not of every watch the source serves.
   */
  indexedBy?: IndexedBy;
}

/**
 * The node source (one request serves every watch: a log query, a block's receipts, a
 * block's trace) that serves these shares, or undefined for none. Each watch keeps its
 * position under its own share's key (handover), so that it can move between this source
 * and its own without a gap; the source polls on its members' most frequent schedule, in
 * their smallest window, from the first watch's start.
 */
export function sharedNodeSource<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>, definition: SourceDefinition, family: RecordFamily, shares: readonly NodeShare<R, W>[]): PlannedSource | undefined {
  const first = shares[0];
  if (first === undefined) return undefined;
  const { schedule, maxWindowBlocks } = sharedTiming(input.defaults, shares.map((share) => share.watch), planningDayStart(input.dayMs));
  const rules: SourceRule[] = [];
  const members: SourceMember[] = [];
  for (const share of shares) {
    const member: SourceMember = { watch: share.watch.name, ownKey: sourceKey(share.own), filter: share.filterText, handover: { skipThrough: -1 } };
    members.push(member);
    for (const rule of share.rules) rules.push(narrowRule(input.compileRule(rule, share.watch, family, share.own), member.handover, share.filter, share.indexedBy, family));
  }
  return {
    key: sourceKey(definition),
    definition,
    description: describeSource(definition),
    watch: first.watch.name,
    family,
    rules,
    schedule,
    start: first.watch.start ?? input.defaults.start,
    maxWindowBlocks,
    members,
  };
}

/** A shared node source's schedule (its members' most frequent, the first on a tie) and window (their smallest). */
function sharedTiming(defaults: PlanInput<RuleInput, WatchInput>["defaults"], watches: readonly WatchInput[], dayStart: number): { schedule: string; maxWindowBlocks: number } {
  const ticks = new Map<string, number>();
  const ticksOf = (s: string) => {
    let n = ticks.get(s);
    if (n === undefined) ticks.set(s, (n = firingsOfDay(s, dayStart).length));
    return n;
  };
  let schedule: string | undefined;
  let maxWindowBlocks = Infinity;
  for (const watch of watches) {
    const own = watch.schedule ?? defaults.schedule;
    if (schedule === undefined || ticksOf(own) > ticksOf(schedule)) schedule = own;
    maxWindowBlocks = Math.min(maxWindowBlocks, watch.max_window_blocks ?? defaults.max_window_blocks);
  }
  return { schedule: schedule ?? defaults.schedule, maxWindowBlocks };
}
