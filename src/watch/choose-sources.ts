import { OPERATIONS } from "../explorer/operations.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import { parseCondition, type ConditionNode } from "../rules/parse-condition.js";
import { groupNeeds } from "./group-needs.js";
import { indexWhen, type IndexedBy } from "./index-by.js";
import type { Plan, PlanInput, RuleInput, WatchInput } from "./plan.js";
import { cheaper, createGroupPlanner, type Group, type Option } from "./plan-group.js";
import type { PlannedSource, SourceMember } from "./poller.js";
import { sourceDayCost, type SourceDayCost } from "./source-day-cost.js";
import { collectNeeds, type Need, type SharedCandidate } from "./source-needs.js";
import { RuleFieldsOf, type SourceRule } from "./source-rule.js";
import { describeSource, isNodeOperation, sourceKey, type SourceDefinition } from "./source.js";
import { planningDayStart } from "./schedule-firings.js";

const DAY_SECONDS = 86_400;
/** Rejected alternatives described per choice (the cheapest): a group of 1,000 accounts of one collection has over 1,000. */
const MAX_REJECTED_SHOWN = 8;

/**
 * The share of `explorer.requests_per_second` the plan may use in steady state (one block a
 * second). The rest is kept for catching up: a source behind the head (a start in the past,
 * downtime, a failed tick) needs requests beyond its steady ones, and operation 8 needs one
 * per block behind. With half the rate left over, a per-block source catches up at least as
 * fast as the chain grows: an hour behind is caught up within about an hour.
 */
export const STEADY_STATE_SHARE = 0.5;


export interface PlanAlternative {
  /** One line per source: "op 8 internal transactions of every block ← a, b". */
  sources: string[];
  creditsPerDay: number;
  requestsPerDay: number;
  /** Why it was not chosen; absent for the chosen one. */
  rejected?: string;
}

export interface PlanChoice {
  /** The watches the choice is about (their sources could be shared). */
  watches: string[];
  chosen: PlanAlternative;
  /** One source per watch and filter (today's plan before the planner), for comparison. */
  own: PlanAlternative;
  /** The cheapest rejected alternatives (at most MAX_REJECTED_SHOWN). */
  rejected: PlanAlternative[];
  /** Rejected alternatives not listed (none dearer than those listed). */
  omitted: number;
}

/** The whole plan's request rate against `explorer.requests_per_second`. */
export interface PlanRate {
  /** Average requests a second of the chosen sources at one block a second. */
  requestsPerSecond: number;
  /** explorer.requests_per_second, when given. */
  limit: number | undefined;
  /** What the steady state may use: limit × STEADY_STATE_SHARE. */
  steadyLimit: number | undefined;
  fits: boolean;
  /** Groups that got a dearer alternative than their cheapest so that the whole plan fits. */
  repairedGroups: number;
}

// One formatter: toLocaleString builds one per call, a tenth of a millisecond each, per group.
const NUMBER = new Intl.NumberFormat("en-US");
const perSecond = (requestsPerDay: number) => (requestsPerDay / DAY_SECONDS).toFixed(2);



/** A source of one alternative: its key, what it asks, the needs it serves (in config order). */
interface Draft<R, W> {
  key: string;
  definition: SourceDefinition;
  needs: Array<{ need: Need<R, W>; shared?: SharedCandidate }>;
}

/**
 * The cost-based choice. Needs that could share a source form a group (connected through
 * their candidate sources). In each group, sets of its shareable sources are tried "open"
 * (every subset when there are at most MAX_EXHAUSTIVE; else none, all, and each one alone),
 * each need going to the first open shared source that sees it (or to its own source); an
 * alternative is allowed when the API plan has its operations (operation 7 only on PRO_PLUS)
 * and it respects `via: shared` pins. Each group first takes its cheapest allowed alternative
 * (fewest credits a day, then fewest requests).
 *
 * `requests_per_second` is for the whole config, so the rate is checked on the sum: while the
 * chosen sources need more than STEADY_STATE_SHARE of it, the group whose next alternative
 * with fewer requests costs the fewest extra credits per request saved takes it. This greedy
 * repair is not guaranteed optimal (that is a knapsack problem), but each step is the
 * cheapest saving available, and groups rarely have more than two useful alternatives. If
 * even the fewest requests do not fit, every group keeps its cheapest alternative and
 * `plan`/`validate` warn with the numbers (`rate`).
 *
 * A shared source polls on the most frequent schedule of its watches (so no watch waits
 * longer than on its own) and the smallest window. Costing is incremental: an alternative is
 * the all-own plan changed at the sources its open keys touch, so a group of n needs with n
 * shareable sources costs O(n) to try "each alone", not O(n²).
 */
export function chooseSources<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>, definitionsOfWatch: (network: string, watch: W) => SourceDefinition[]): Plan {
  const apiPlan = input.apiPlan ?? "FREE";
  const dayStart = planningDayStart(input.dayMs);

  // Hashing a definition is a few microseconds; 10,000 watches ask for the same keys again and again.
  const keys = new Map<string, string>();
  const keyOf = (definition: SourceDefinition) => {
    const canonical = `${definition.operation} ${definition.address ?? ""} ${definition.signature ?? ""} ${definition.contractAddress ?? ""} ${definition.tokenId ?? ""} ${definition.network}`;
    let key = keys.get(canonical);
    if (key === undefined) keys.set(canonical, (key = sourceKey(definition)));
    return key;
  };
  // Cached: laying out a schedule's day is ~1 ms, and 10,000 watches share a handful of schedules.
  const costs = new Map<string, SourceDayCost>();
  const dayCost = (definition: SourceDefinition, schedule: string, maxWindowBlocks: number) => {
    const cacheKey = `${definition.operation} ${maxWindowBlocks} ${schedule}`;
    let found = costs.get(cacheKey);
    if (found === undefined) costs.set(cacheKey, (found = sourceDayCost(definition.operation, schedule, maxWindowBlocks, dayStart)));
    return found;
  };
  const ticks = new Map<string, number>();
  const ticksOf = (schedule: string) => {
    let found = ticks.get(schedule);
    if (found === undefined) ticks.set(schedule, (found = dayCost({ network: "", operation: "accountEventLogs" }, schedule, 1).ticksPerDay));
    return found;
  };

  const { needs, idleWatches } = collectNeeds(input, definitionsOfWatch, keyOf, ticksOf);

  /** A source's cost when it serves these needs: the most frequent schedule among them (the first on a tie), the smallest window. */
  const costOfSource = (definition: SourceDefinition, members: Iterable<Need<R, W>>) => {
    let best: Need<R, W> | undefined;
    let window = Infinity;
    for (const need of members) {
      if (best === undefined || need.ticks > best.ticks || (need.ticks === best.ticks && need.index < best.index)) best = need;
      window = Math.min(window, need.maxWindowBlocks);
    }
    if (best === undefined) return undefined;
    return { schedule: best.schedule, maxWindowBlocks: window, ...dayCost(definition, best.schedule, window) };
  };
  const planGroup = createGroupPlanner(apiPlan, costOfSource);
  const groups = groupNeeds(needs).map((groupNeeds) => planGroup(groupNeeds));

  const rate = repairRate(groups, input.requestsPerSecond);

  const draftsOf = (group: Group<R, W>, option: Option): Draft<R, W>[] => {
    const isOpen = new Set(option.open);
    const drafts = new Map<string, Draft<R, W>>();
    for (const need of group.needs) {
      const shared = need.candidates.find((c) => isOpen.has(c.key));
      const key = shared?.key ?? need.ownKey;
      let draft = drafts.get(key);
      if (!draft) drafts.set(key, (draft = { key, definition: shared?.definition ?? need.own, needs: [] }));
      draft.needs.push({ need, shared });
    }
    return [...drafts.values()];
  };
  const describe = (group: Group<R, W>, option: Option, rejected?: string): PlanAlternative => ({
    sources: draftsOf(group, option).map((d) => `${isNodeOperation(d.definition.operation) ? "node" : `op ${OPERATIONS[d.definition.operation].number}`} ${describeSource(d.definition)} ← ${[...new Set(d.needs.map((m) => m.need.watch.name))].join(", ")}`),
    creditsPerDay: option.creditsPerDay,
    requestsPerDay: option.requestsPerDay,
    ...(rejected === undefined ? {} : { rejected }),
  });

  const choices: PlanChoice[] = [];
  const sources: PlannedSource[] = [];
  const totalRequests = groups.reduce((sum, g) => sum + g.chosen.requestsPerDay, 0);
  for (const group of groups) {
    const { chosen } = group;
    const others = group.options.filter((o) => o !== chosen).sort((a, b) => (cheaper(a, b) ? -1 : cheaper(b, a) ? 1 : 0));
    const whyNot = (option: Option): string => {
      if (option.problem !== undefined) return option.problem;
      if (option.requestsPerDay > chosen.requestsPerDay && !cheaper(chosen, option) && rate.steadyLimit !== undefined) {
        const total = totalRequests - chosen.requestsPerDay + option.requestsPerDay;
        return `${perSecond(total)} requests a second for the whole config: more than ${STEADY_STATE_SHARE * 100}% of explorer.requests_per_second (${rate.limit}), the rest being kept for catching up`;
      }
      return extraCost(option, chosen);
    };
    const shown = others.slice(0, MAX_REJECTED_SHOWN);
    const described = describe(group, chosen);
    choices.push({
      watches: group.needs.length === 1 ? [(group.needs[0] as Need<R, W>).watch.name] : [...new Set(group.needs.map((n) => n.watch.name))],
      chosen: described,
      own: chosen === group.options[0] ? { ...described } : describe(group, group.options[0] as Option),
      rejected: shown.map((o) => describe(group, o, whyNot(o))),
      omitted: others.length - shown.length,
    });
    for (const draft of draftsOf(group, chosen)) sources.push(toPlannedSource(draft));
  }

  function toPlannedSource(draft: Draft<R, W>): PlannedSource {
    const first = (draft.needs[0] as Draft<R, W>["needs"][number]).need;
    const cost = costOfSource(draft.definition, draft.needs.map((m) => m.need))!;
    const rules: SourceRule[] = [];
    const members: SourceMember[] = [];
    for (const { need, shared } of draft.needs) {
      const served: SourceMember = { watch: need.watch.name, ownKey: need.ownKey, filter: shared?.filterText, handover: { skipThrough: -1 } };
      members.push(served);
      for (const rule of need.rules) rules.push(narrowRule(input.compileRule(rule, need.watch, need.family, need.own), served.handover, shared?.filter));
    }
    return {
      key: draft.key,
      definition: draft.definition,
      description: describeSource(draft.definition),
      watch: first.watch.name,
      family: first.family,
      rules,
      schedule: cost.schedule,
      start: first.watch.start ?? input.defaults.start,
      maxWindowBlocks: cost.maxWindowBlocks,
      members,
    };
  }

  return { sources, idleWatches, choices, rate };
}


/**
 * The greedy repair of the whole plan's request rate (see chooseSources). Works on each
 * group's Pareto front of allowed alternatives (fewer requests only for more credits), which
 * is short even when a group has thousands of alternatives.
 */
function repairRate<R, W>(groups: Group<R, W>[], requestsPerSecond: number | undefined): PlanRate {
  const limitPerDay = requestsPerSecond === undefined ? Infinity : requestsPerSecond * DAY_SECONDS * STEADY_STATE_SHARE;
  let total = groups.reduce((sum, g) => sum + g.chosen.requestsPerDay, 0);
  const result = (fits: boolean, repairedGroups: number): PlanRate => ({
    requestsPerSecond: total / DAY_SECONDS,
    limit: requestsPerSecond,
    steadyLimit: requestsPerSecond === undefined ? undefined : requestsPerSecond * STEADY_STATE_SHARE,
    fits,
    repairedGroups,
  });
  if (total <= limitPerDay) return result(true, 0);
  const fronts = new Map<Group<R, W>, Option[]>();
  for (const group of groups) {
    if (group.cheapest.problem !== undefined) continue;
    const sorted = group.options
      .filter((o) => o.problem === undefined && o.requestsPerDay < group.cheapest.requestsPerDay)
      .sort((a, b) => a.requestsPerDay - b.requestsPerDay || a.creditsPerDay - b.creditsPerDay);
    // An alternative is worth a move only when every one with fewer requests costs more credits.
    const front: Option[] = [];
    let fewest = Infinity;
    for (const option of sorted) {
      if (option.creditsPerDay >= fewest) continue;
      front.push(option);
      fewest = option.creditsPerDay;
    }
    if (front.length > 0) fronts.set(group, front);
  }
  while (total > limitPerDay) {
    let best: { group: Group<R, W>; option: Option; price: number } | undefined;
    for (const [group, front] of fronts) {
      for (const option of front) {
        const saved = group.chosen.requestsPerDay - option.requestsPerDay;
        if (saved <= 0) continue;
        const price = (option.creditsPerDay - group.chosen.creditsPerDay) / saved;
        if (best === undefined || price < best.price) best = { group, option, price };
      }
    }
    if (best === undefined) break;
    total -= best.group.chosen.requestsPerDay - best.option.requestsPerDay;
    best.group.chosen = best.option;
  }
  if (total <= limitPerDay) return result(true, groups.filter((g) => g.chosen !== g.cheapest).length);
  // Even the fewest requests do not fit: more credits would buy nothing that works. Keep the cheapest; `plan` warns.
  for (const group of groups) group.chosen = group.cheapest;
  total = groups.reduce((sum, g) => sum + g.chosen.requestsPerDay, 0);
  return result(false, 0);
}

/** Why a feasible alternative lost: more credits, or as many and more requests, or a tie kept in favour of fewer shared records. */
function extraCost(alternative: { creditsPerDay: number; requestsPerDay: number }, best: { creditsPerDay: number; requestsPerDay: number }): string {
  const credits = alternative.creditsPerDay - best.creditsPerDay;
  if (credits > 0) return `${NUMBER.format(credits)} more credits a day`;
  const requests = alternative.requestsPerDay - best.requestsPerDay;
  if (requests > 0) return `as many credits, ${NUMBER.format(requests)} more requests a day`;
  return "as many credits and requests: the first alternative tried (fewer shared sources) is kept";
}

/**
 * A rule on a shared source sees only the records its watch's own source would have
 * returned, and no block its watch already had from the source that served it before (the
 * handover, see the poller). The condition (read by the rule index) is the rule's, beside
 * what `indexedBy` says of its family's records where the filter implies it (what a record
 * must have to pass it): the index only narrows the candidates, and `test` decides.
 */
export function narrowRule(rule: SourceRule, handover: SourceMember["handover"], filter: ((record: WatchedRecord) => boolean) | undefined, indexedBy?: IndexedBy, family?: RecordFamily): SourceRule {
  return new NarrowedRule(rule, handover, filter, indexedBy?.place, indexedBy?.value, family);
}

/** The path of a `when` itself, one array for every narrowed rule's condition. */
const TOP: readonly (string | number)[] = [];

/** narrowRule's rule: fields and methods rather than a closure over them, as CompiledSourceRule (one per watch and source). */
class NarrowedRule extends RuleFieldsOf<SourceRule> implements SourceRule {
  constructor(
    rule: SourceRule,
    private readonly handover: SourceMember["handover"],
    private readonly filter: ((record: WatchedRecord) => boolean) | undefined,
    /** What the filter implies (NodeShare.indexedBy), as two fields: the object it came in is one more per watch. With `family`: all or none. */
    private readonly indexPlace: IndexedBy["place"] | undefined,
    private readonly indexValue: IndexedBy["value"] | undefined,
    private readonly family: RecordFamily | undefined,
  ) {
    super(rule);
  }

  /**
   * The filter's condition beside the rule's, for the rule index only (the test runs the
   * filter itself). Written and parsed when asked: the index reads it once, when it is
   * built, and a daemon keeps a narrowed rule per watch.
   */
  get condition(): ConditionNode | undefined {
    const { indexPlace, indexValue, family } = this;
    const own = this.rule.condition;
    if (indexPlace === undefined || indexValue === undefined || family === undefined) return own;
    const when = indexWhen({ place: indexPlace, value: indexValue });
    const parsed = parseCondition(when, { family });
    if (!parsed.ok) throw new TypeError(`the index condition ${JSON.stringify(when)} does not parse: ${JSON.stringify(parsed.issues)}`);
    return own === undefined ? parsed.node : { type: "all", path: TOP, children: [parsed.node, own] };
  }

  get absence(): SourceRule["absence"] {
    return this.rule.absence;
  }

  test(record: WatchedRecord): boolean {
    return record.block > this.handover.skipThrough && (this.filter === undefined || this.filter(record)) && this.rule.test(record);
  }

  toAlert(record: WatchedRecord, now: Date): AlertDocument {
    return this.rule.toAlert(record, now);
  }
}
