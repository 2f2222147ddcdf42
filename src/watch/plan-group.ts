import { OPERATIONS } from "../explorer/operations.js";
import type { WatchInput } from "./plan.js";
import type { Need } from "./source-needs.js";
import { isNodeOperation, type SourceDefinition } from "./source.js";

/** Above this many shareable sources in one group, only "none shared", "all shared" and each one alone are tried. */
const MAX_EXHAUSTIVE = 10;
/** ...and also when trying every subset would cost more than this many need assignments (a few milliseconds). */
const MAX_EXHAUSTIVE_WORK = 200_000;

/** One alternative of a group: which shared sources are open, and what the group then costs. */
export interface Option {
  open: readonly string[];
  creditsPerDay: number;
  requestsPerDay: number;
  /** Why the alternative is not allowed (the API plan, a `via: shared` pin); absent when allowed. */
  problem?: string;
}

export interface Group<R, W> {
  needs: Need<R, W>[];
  options: Option[];
  /** The cheapest allowed option (or the cheapest of all when none is allowed). */
  cheapest: Option;
  chosen: Option;
}

/** Costs every alternative of a group of needs, and picks its cheapest allowed one (see chooseSources). */
export function createGroupPlanner<R, W extends WatchInput>(
  apiPlan: "FREE" | "PRO_PLUS",
  /** A source's day cost when it serves these needs (undefined for none). */
  costOfSource: (definition: SourceDefinition, members: Iterable<Need<R, W>>) => { creditsPerDay: number; requestsPerDay: number } | undefined,
) {
  /** Operation 7 on a plan without it, unless every watch it serves is pinned to its own sources (the user asked for it; `plan` warns). */
  const needsMissingPlan = (definition: SourceDefinition, members: Iterable<Need<R, W>>) => {
    if (isNodeOperation(definition.operation) || OPERATIONS[definition.operation].plan !== "PRO_PLUS" || apiPlan === "PRO_PLUS") return false;
    for (const need of members) if (need.watch.via !== "own") return true;
    return false;
  };

  /** Every alternative of a group, costed incrementally against its all-own plan. */
  function planGroup(groupNeeds: Need<R, W>[]): Group<R, W> {
    const ownMembers = new Map<string, Need<R, W>[]>();
    const definitionOf = new Map<string, SourceDefinition>();
    const needsOfCandidate = new Map<string, Need<R, W>[]>();
    for (const need of groupNeeds) {
      const list = ownMembers.get(need.ownKey);
      if (list) list.push(need);
      else ownMembers.set(need.ownKey, [need]);
      definitionOf.set(need.ownKey, need.own);
      for (const c of need.candidates) {
        definitionOf.set(c.key, c.definition);
        const users = needsOfCandidate.get(c.key);
        if (users) users.push(need);
        else needsOfCandidate.set(c.key, [need]);
      }
    }
    // The all-own plan, per source: what an alternative changes is measured against it.
    const base = new Map<string, { creditsPerDay: number; requestsPerDay: number; missingPlan: boolean }>();
    let baseCredits = 0;
    let baseRequests = 0;
    let baseMissingPlan = 0;
    for (const [key, members] of ownMembers) {
      const definition = definitionOf.get(key) as SourceDefinition;
      const cost = costOfSource(definition, members)!;
      const missingPlan = needsMissingPlan(definition, members);
      base.set(key, { creditsPerDay: cost.creditsPerDay, requestsPerDay: cost.requestsPerDay, missingPlan });
      baseCredits += cost.creditsPerDay;
      baseRequests += cost.requestsPerDay;
      if (missingPlan) baseMissingPlan += 1;
    }
    const pinnedShared = groupNeeds.filter((n) => n.watch.via === "shared" && n.candidates.length > 0);

    const evaluate = (open: readonly string[], affected: Iterable<Need<R, W>>): Option | undefined => {
      const isOpen = new Set(open);
      const moved = new Set<Need<R, W>>();
      const assigned = new Map<string, Need<R, W>[]>();
      for (const need of affected) {
        if (moved.has(need)) continue;
        const to = need.candidates.find((c) => isOpen.has(c.key));
        if (to === undefined) continue;
        moved.add(need);
        const list = assigned.get(to.key);
        if (list) list.push(need);
        else assigned.set(to.key, [need]);
      }
      // An open source no need went to is the same alternative as a smaller set.
      if (assigned.size !== isOpen.size) return undefined;
      const touched = new Set(open);
      for (const need of moved) touched.add(need.ownKey);
      let credits = baseCredits;
      let requests = baseRequests;
      let missingPlan = baseMissingPlan;
      for (const key of touched) {
        const before = base.get(key);
        if (before) {
          credits -= before.creditsPerDay;
          requests -= before.requestsPerDay;
          if (before.missingPlan) missingPlan -= 1;
        }
        const members = (ownMembers.get(key) ?? []).filter((n) => !moved.has(n)).concat(assigned.get(key) ?? []);
        const definition = definitionOf.get(key) as SourceDefinition;
        const cost = costOfSource(definition, members);
        if (cost === undefined) continue;
        credits += cost.creditsPerDay;
        requests += cost.requestsPerDay;
        if (needsMissingPlan(definition, members)) missingPlan += 1;
      }
      const option: Option = { open, creditsPerDay: credits, requestsPerDay: requests };
      const unshared = pinnedShared.find((n) => !moved.has(n));
      if (missingPlan > 0) option.problem = `operation 7 needs the PRO_PLUS API plan (explorer.api_plan is ${apiPlan})`;
      else if (unshared) option.problem = `watch ${unshared.watch.name} is pinned to a shared source (via: shared)`;
      return option;
    };

    const sharedKeys = [...needsOfCandidate.keys()];
    const options: Option[] = [];
    const add = (option: Option | undefined) => {
      if (option) options.push(option);
    };
    add(evaluate([], []));
    if (sharedKeys.length <= MAX_EXHAUSTIVE && 2 ** sharedKeys.length * groupNeeds.length <= MAX_EXHAUSTIVE_WORK) {
      for (let mask = 1; mask < 2 ** sharedKeys.length; mask++) add(evaluate(sharedKeys.filter((_, i) => mask & (1 << i)), groupNeeds));
    } else if (sharedKeys.length > 0) {
      add(evaluate(sharedKeys, groupNeeds));
      if (sharedKeys.length > 1) for (const key of sharedKeys) add(evaluate([key], needsOfCandidate.get(key) as Need<R, W>[]));
    }
    const allowed = options.filter((o) => o.problem === undefined);
    // Nothing allowed (e.g. pinned to op 7 on FREE): fall back to the cheapest of all, and `plan` warns.
    const cheapest = (allowed.length > 0 ? allowed : options).reduce((a, b) => (cheaper(b, a) ? b : a));
    return { needs: groupNeeds, options, cheapest, chosen: cheapest };
  }

  return planGroup;
}

/** Fewer credits, then fewer requests; on a full tie the first tried (fewer shared sources) wins. */
export function cheaper(a: Option, b: Option): boolean {
  return a.creditsPerDay < b.creditsPerDay || (a.creditsPerDay === b.creditsPerDay && a.requestsPerDay < b.requestsPerDay);
}
