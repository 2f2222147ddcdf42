import { OPERATIONS } from "../explorer/operations.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { InternalTransactionListItem, EventLog, NftTransfer } from "../explorer/types.js";
import type { Plan, PlanInput, RuleInput, WatchInput } from "./plan.js";
import type { PlannedSource, SourceMember } from "./poller.js";
import { sourceDayCost } from "./source-day-cost.js";
import type { SourceRule } from "./source-rule.js";
import { FAMILY_OF_OPERATION, describeSource, sourceKey, type SourceDefinition } from "./source.js";
import { utcDayStart } from "./schedule-firings.js";

/** Monday 2026-01-05: the default day whose schedules are costed, fixed so that a plan never changes with the date. */
const REFERENCE_DAY_MS = Date.UTC(2026, 0, 5);
const DAY_SECONDS = 86_400;
/** Above this many shareable sources in one group, only "none shared", "all shared" and each one alone are tried. */
const MAX_EXHAUSTIVE = 10;

/** What one watch needs of one server-side query: the records its own source would return, for its rules. */
interface Need<R, W> {
  watch: W;
  family: RecordFamily;
  /** The watch's own source: today's plan. */
  own: SourceDefinition;
  rules: R[];
  schedule: string;
  maxWindowBlocks: number;
}

/** A wider source that sees a need's records, and the client-side filter that gives them back exactly. */
interface SharedCandidate {
  definition: SourceDefinition;
  key: string;
  /** Keeps the records the need's own source would have returned. */
  filter: (record: WatchedRecord) => boolean;
  /** The filter in words, for `kaiawatch plan`. */
  filterText: string;
}

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
  rejected: PlanAlternative[];
}

// One formatter: toLocaleString builds one per call, a tenth of a millisecond each, per group.
const NUMBER = new Intl.NumberFormat("en-US");
const lower = (value: string | undefined) => value?.toLowerCase();

/**
 * The shared sources that see the records of a watch's own source, with the filter that
 * gives back exactly those records (the same filters the simulator and the API apply
 * server-side). Operation 7 of an account is "from or to the account", so operation 8's
 * records with that filter are the same list; an event filter is topic0; operation 3's
 * contract filter is the record's contract; operation 4's token filter is its token id.
 */
function sharedCandidates(own: SourceDefinition): SharedCandidate[] {
  const candidate = (definition: SourceDefinition, filter: (record: WatchedRecord) => boolean, filterText: string): SharedCandidate => ({ definition, key: sourceKey(definition), filter, filterText });
  const { network, address } = own;
  switch (own.operation) {
    case "accountInternalTransactions": {
      const account = address as string;
      return [
        candidate(
          { network, operation: "blockInternalTransactions" },
          (r) => {
            const d = r.data as InternalTransactionListItem;
            return lower(d.from) === account || lower(d.to) === account;
          },
          `from or to ${account}`,
        ),
      ];
    }
    case "accountEventLogs": {
      const signature = own.signature;
      if (signature === undefined) return [];
      return [candidate({ network, operation: "accountEventLogs", address }, (r) => lower((r.data as EventLog).topics[0]) === signature, `topic0 ${signature}`)];
    }
    case "accountNftTransfers": {
      const contract = own.contractAddress;
      if (contract === undefined) return [];
      const account = address as string;
      return [
        candidate({ network, operation: "accountNftTransfers", address }, (r) => lower((r.data as NftTransfer).contract.contract_address) === contract, `contract ${contract}`),
        candidate(
          { network, operation: "nftTransfers", address: contract },
          (r) => {
            const d = r.data as NftTransfer;
            return lower(d.from) === account || lower(d.to) === account;
          },
          `from or to ${account}`,
        ),
      ];
    }
    case "nftTransfers": {
      const tokenId = own.tokenId;
      if (tokenId === undefined) return [];
      return [candidate({ network, operation: "nftTransfers", address }, (r) => (r.data as NftTransfer).token_id === tokenId, `token ${tokenId}`)];
    }
    case "blockInternalTransactions":
      return [];
  }
}

interface Assigned<R, W> {
  need: Need<R, W>;
  /** Absent: the need's own source. */
  shared?: SharedCandidate;
}

interface CostedSource {
  key: string;
  definition: SourceDefinition;
  members: Assigned<unknown, WatchInput>[];
  schedule: string;
  maxWindowBlocks: number;
  creditsPerDay: number;
  requestsPerDay: number;
  ticksPerDay: number;
}

/**
 * The cost-based choice. Needs that could share a source form a group (connected through
 * their candidate sources); groups are independent, so each is chosen on its own: every
 * subset of its shareable sources is tried "open", each need goes to the first open shared
 * source that sees it (or to its own source), and the alternative with the fewest credits a
 * day wins, among those the API plan allows (operation 7 only on PRO_PLUS) and whose
 * requests fit in `requests_per_second`. A shared source polls on the most frequent schedule
 * of its watches (so no watch waits longer than on its own) and the smallest window.
 */
export function chooseSources<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>, definitionsOfWatch: (network: string, watch: W) => SourceDefinition[]): Plan {
  const apiPlan = input.apiPlan ?? "FREE";
  const dayStart = utcDayStart(input.dayMs ?? REFERENCE_DAY_MS);
  const rateLimit = input.requestsPerSecond === undefined ? Infinity : input.requestsPerSecond * DAY_SECONDS;
  const idleWatches: string[] = [];
  // Grouped once, not filtered per watch: 10,000 watches and rules plan in linear time.
  const rulesByWatch = new Map<string, R[]>();
  for (const rule of input.rules) {
    const list = rulesByWatch.get(rule.watch);
    if (list) list.push(rule);
    else rulesByWatch.set(rule.watch, [rule]);
  }
  const needs: Need<R, W>[] = [];
  for (const watch of input.watches) {
    const rules = rulesByWatch.get(watch.name) ?? [];
    if (rules.length === 0) {
      idleWatches.push(watch.name);
      continue;
    }
    for (const own of definitionsOfWatch(input.network, watch)) {
      const family = FAMILY_OF_OPERATION[own.operation];
      const familyRules = rules.filter((rule) => (rule.source ?? family) === family);
      if (familyRules.length === 0) continue;
      needs.push({ watch, family, own, rules: familyRules, schedule: watch.schedule ?? input.defaults.schedule, maxWindowBlocks: watch.max_window_blocks ?? input.defaults.max_window_blocks });
    }
  }

  // Groups: union-find over source keys (own and shared candidates).
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    parent.set(key, root);
    return root;
  };
  const union = (a: string, b: string) => {
    for (const k of [a, b]) if (!parent.has(k)) parent.set(k, k);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  };
  const candidatesOf = new Map<Need<R, W>, SharedCandidate[]>();
  for (const need of needs) {
    const ownKey = sourceKey(need.own);
    const candidates = need.watch.via === "own" ? [] : sharedCandidates(need.own);
    candidatesOf.set(need, candidates);
    union(ownKey, ownKey);
    for (const c of candidates) union(ownKey, c.key);
  }
  const groups = new Map<string, Need<R, W>[]>();
  for (const need of needs) {
    const root = find(sourceKey(need.own));
    const list = groups.get(root);
    if (list) list.push(need);
    else groups.set(root, [need]);
  }

  const ticksCache = new Map<string, number>();
  // Cached: laying out a schedule's day is ~1 ms, and 10,000 watches share a handful of schedules.
  const costCache = new Map<string, ReturnType<typeof sourceDayCost>>();
  const cost = (definition: SourceDefinition, schedule: string, maxWindowBlocks: number) => {
    const cacheKey = `${definition.operation} ${maxWindowBlocks} ${schedule}`;
    let found = costCache.get(cacheKey);
    if (found === undefined) costCache.set(cacheKey, (found = sourceDayCost(definition.operation, schedule, maxWindowBlocks, dayStart)));
    return found;
  };
  const ticksOf = (schedule: string) => {
    let ticks = ticksCache.get(schedule);
    if (ticks === undefined) ticksCache.set(schedule, (ticks = cost({ network: "", operation: "accountEventLogs" }, schedule, 1).ticksPerDay));
    return ticks;
  };

  const costSources = (assigned: Assigned<R, W>[]): CostedSource[] => {
    const byKey = new Map<string, CostedSource>();
    for (const a of assigned) {
      const definition = a.shared?.definition ?? a.need.own;
      const key = a.shared?.key ?? sourceKey(a.need.own);
      let source = byKey.get(key);
      if (!source) {
        source = { key, definition, members: [], schedule: a.need.schedule, maxWindowBlocks: a.need.maxWindowBlocks, creditsPerDay: 0, requestsPerDay: 0, ticksPerDay: 0 };
        byKey.set(key, source);
      } else {
        if (ticksOf(a.need.schedule) > ticksOf(source.schedule)) source.schedule = a.need.schedule;
        source.maxWindowBlocks = Math.min(source.maxWindowBlocks, a.need.maxWindowBlocks);
      }
      source.members.push(a as Assigned<unknown, WatchInput>);
    }
    for (const source of byKey.values()) Object.assign(source, cost(source.definition, source.schedule, source.maxWindowBlocks));
    return [...byKey.values()];
  };

  const describe = (sources: CostedSource[]): PlanAlternative => ({
    sources: sources.map((s) => {
      const watches = [...new Set(s.members.map((m) => m.need.watch.name))].join(", ");
      return `op ${OPERATIONS[s.definition.operation].number} ${describeSource(s.definition)} ← ${watches}`;
    }),
    creditsPerDay: sources.reduce((sum, s) => sum + s.creditsPerDay, 0),
    requestsPerDay: sources.reduce((sum, s) => sum + s.requestsPerDay, 0),
  });

  const choices: PlanChoice[] = [];
  const chosenSources: CostedSource[] = [];
  for (const group of groups.values()) {
    const sharedKeys = [...new Set(group.flatMap((need) => (candidatesOf.get(need) ?? []).map((c) => c.key)))];
    const openSets: Set<string>[] = [];
    if (sharedKeys.length <= MAX_EXHAUSTIVE) {
      for (let mask = 0; mask < 1 << sharedKeys.length; mask++) openSets.push(new Set(sharedKeys.filter((_, i) => mask & (1 << i))));
    } else {
      openSets.push(new Set(), new Set(sharedKeys), ...sharedKeys.map((k) => new Set([k])));
    }
    type Tried = { sources: CostedSource[]; alternative: PlanAlternative };
    const tried: Tried[] = [];
    let own: PlanAlternative | undefined;
    for (const open of openSets) {
      const assigned = group.map((need): Assigned<R, W> => ({ need, shared: (candidatesOf.get(need) ?? []).find((c) => open.has(c.key)) }));
      const sources = costSources(assigned);
      // An open source no need went to is the same alternative as a smaller set: skip it.
      if (sources.filter((s) => open.has(s.key)).length !== open.size) continue;
      const alternative = describe(sources);
      if (open.size === 0) own = { ...alternative };
      // A watch pinned to its own sources keeps operation 7 even on FREE: the user asked for it (`plan` warns).
      const proPlus = sources.find((s) => OPERATIONS[s.definition.operation].plan === "PRO_PLUS" && !s.members.every((m) => m.need.watch.via === "own"));
      const unshared = assigned.find((a) => a.need.watch.via === "shared" && !a.shared && (candidatesOf.get(a.need) ?? []).length > 0);
      if (proPlus && apiPlan !== "PRO_PLUS") {
        alternative.rejected = `operation ${OPERATIONS[proPlus.definition.operation].number} needs the PRO_PLUS API plan (explorer.api_plan is ${apiPlan})`;
      } else if (unshared) {
        alternative.rejected = `watch ${unshared.need.watch.name} is pinned to a shared source (via: shared)`;
      } else if (alternative.requestsPerDay > rateLimit) {
        alternative.rejected = `${(alternative.requestsPerDay / DAY_SECONDS).toFixed(2)} requests a second exceed explorer.requests_per_second`;
      }
      tried.push({ sources, alternative });
    }
    const feasible = tried.filter((t) => t.alternative.rejected === undefined);
    // Nothing allowed (e.g. pinned to op 7 on FREE): fall back to the cheapest of all, and `plan` warns.
    const pool = feasible.length > 0 ? feasible : tried;
    const best = pool.reduce((a, b) => (b.alternative.creditsPerDay < a.alternative.creditsPerDay || (b.alternative.creditsPerDay === a.alternative.creditsPerDay && b.alternative.requestsPerDay < a.alternative.requestsPerDay) ? b : a));
    chosenSources.push(...best.sources);
    const rejected = tried.filter((t) => t !== best).map((t) => ({ ...t.alternative, rejected: t.alternative.rejected ?? extraCost(t.alternative, best.alternative) }));
    choices.push({ watches: [...new Set(group.map((n) => n.watch.name))], chosen: { ...best.alternative, rejected: undefined }, own: own ?? best.alternative, rejected });
  }

  const sources = chosenSources.map((costed): PlannedSource => {
    const first = costed.members[0] as Assigned<R, W>;
    const rules: SourceRule[] = [];
    const members: SourceMember[] = [];
    for (const member of costed.members as Assigned<R, W>[]) {
      const served: SourceMember = { watch: member.need.watch.name, ownKey: sourceKey(member.need.own), filter: member.shared?.filterText, handover: { skipThrough: -1 } };
      members.push(served);
      for (const rule of member.need.rules) rules.push(narrowRule(input.compileRule(rule, member.need.watch, member.need.family, member.need.own), served.handover, member.shared?.filter));
    }
    return {
      key: costed.key,
      definition: costed.definition,
      description: describeSource(costed.definition),
      watch: first.need.watch.name,
      family: first.need.family,
      rules,
      schedule: costed.schedule,
      start: first.need.watch.start ?? input.defaults.start,
      maxWindowBlocks: costed.maxWindowBlocks,
      members,
    };
  });
  return { sources, idleWatches, choices };
}

/** Why a feasible alternative lost: more credits, or as many and more requests, or a tie kept in favour of fewer shared records. */
function extraCost(alternative: PlanAlternative, best: PlanAlternative): string {
  const credits = alternative.creditsPerDay - best.creditsPerDay;
  if (credits > 0) return `${NUMBER.format(credits)} more credits a day`;
  const requests = alternative.requestsPerDay - best.requestsPerDay;
  if (requests > 0) return `as many credits, ${NUMBER.format(requests)} more requests a day`;
  return "as many credits and requests: the first alternative tried (fewer shared sources) is kept";
}

/**
 * A rule on a shared source sees only the records its watch's own source would have
 * returned, and no block its watch already had from the source that served it before (the
 * handover, see the poller). The condition (read by the rule index) stays the rule's: the
 * index only narrows the candidates, and `test` decides.
 */
function narrowRule(rule: SourceRule, handover: SourceMember["handover"], filter: ((record: WatchedRecord) => boolean) | undefined): SourceRule {
  const test = rule.test;
  if (filter === undefined) return { ...rule, test: (record) => record.block > handover.skipThrough && test(record) };
  return { ...rule, test: (record) => record.block > handover.skipThrough && filter(record) && test(record) };
}
