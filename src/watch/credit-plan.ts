import type { Config, LogSource, WatchConfig } from "../config/types.js";
import { ENRICHMENT_KINDS, enrichmentCost, type Enrichment } from "../model/enrichment.js";
import { OPERATIONS } from "../explorer/operations.js";
import { planFromConfig } from "./plan-from-config.js";
import { compiledOf, type CompiledConfig } from "../config/compile-config.js";
import { firingsOfDay, previousFiring, utcDayStart } from "./schedule-firings.js";
import { isNodeOperation, isPerBlockOperation, type ExplorerSourceOperation, type SourceOperation } from "./source.js";
import { watchesOf, type PlannedSource } from "./poller.js";
import { planRpcCalls, type RpcPlan } from "./rpc-plan.js";
import { STEADY_STATE_SHARE, type PlanChoice } from "./choose-sources.js";

const DAY_SECONDS = 86_400;
/** Kaia makes one block a second: a tick covers as many blocks as seconds passed since the previous one. */
const BLOCKS_PER_SECOND = 1;

export interface SourceCost {
  key: string;
  watch: string;
  /** Every watch the source serves (watchesOf): the plan table lists them all. */
  watches: string[];
  description: string;
  operation: SourceOperation;
  /** The operation's number in the spec (1..11). */
  operationNumber: number;
  /** Credits per request. */
  cost: number;
  /** The API plan the operation needs. */
  apiPlan: "FREE" | "PRO_PLUS";
  schedule: string;
  maxWindowBlocks: number;
  /** Ticks on the planned day. */
  ticksPerDay: number;
  /** The longest wait between two ticks on that day, in seconds (0 without ticks). */
  longestIntervalSeconds: number;
  requestsPerDay: number;
  creditsPerDay: number;
  /** Average credits of one tick (0 without ticks). */
  creditsPerTick: number;
  /** Records per block one page holds at the usual window: above this, each extra page costs another request. */
  recordsPerBlockInOnePage: number;
}

export interface EnrichmentCost {
  rule: string;
  kind: Enrichment;
  operations: string[];
  /** Credits of one lookup that is not in the cache. */
  creditsPerLookup: number;
}

export interface PlanWarning {
  code: "pro_plus" | "window" | "rate" | "budget" | "no_ticks";
  message: string;
}

/**
 * What catching up costs: after downtime, or for a `start` in the past. Operation 8 asks once
 * per block behind, a windowed source once per `max_window_blocks` blocks behind; the steady
 * state keeps being paid meanwhile, so only the rate left over (requests_per_second minus the
 * steady average) goes to the backlog.
 */
export interface CatchUp {
  /** Requests to catch up one hour (3,600 blocks) behind, all sources together. */
  requestsPerHourBehind: number;
  /** requests_per_second minus the steady state's average (0 when none is left). */
  spareRequestsPerSecond: number;
  /** Seconds to catch up an hour behind at the spare rate; null when nothing is spare. */
  secondsPerHourBehind: number | null;
  /** Requests of the first catch-up of sources whose `start` is N blocks back (`-N`); 0 when none is. */
  startRequests: number;
  /** Seconds that first catch-up takes at the spare rate; null when nothing is spare. */
  startSeconds: number | null;
}

export interface CreditPlan {
  /** The UTC day the schedules were laid out on, YYYY-MM-DD. */
  day: string;
  sources: SourceCost[];
  enrichments: EnrichmentCost[];
  /** Watches no rule reads: not polled, no cost. */
  idleWatches: string[];
  /** The planner's choices: the chosen sources, the rejected alternatives and their cost (costed on a fixed reference Monday). */
  choices: PlanChoice[];
  requestsPerDay: number;
  creditsPerDay: number;
  /** Average explorer requests per second over the day (the client's `requests_per_second` caps the rate). */
  requestsPerSecond: number;
  /** The share of requests_per_second the steady state may use: the rest is kept for catching up. */
  steadyStateShare: number;
  catchUp: CatchUp;
  budget: number | undefined;
  /** When the day's spending would pass the budget (ISO-8601 UTC), or undefined when it does not. */
  budgetExhaustedAt: string | undefined;
  warnings: PlanWarning[];
  /** JSON-RPC calls of the balance watches and the token reads (no explorer credits). */
  rpc: RpcPlan;
}

/**
 * The explorer requests and credits a config spends in one UTC day, tick by tick, as the
 * engine would spend them on a quiet chain: a windowed source asks once per window of at
 * most `max_window_blocks` blocks (a tick covers the blocks made since the previous tick,
 * one a second), and once more for every further page when a window holds more records
 * than `page_size`; operation 8 asks once per block. A tick with no new block costs
 * nothing in practice; at one block a second every tick has one. Enrichments cost per
 * distinct matched lookup, which depends on the chain, so they are listed, not totalled.
 * `compiled`: the loader's compile of `config`; absent, it is compiled here (a config built in code).
 */
export function planCredits(config: Config, options: { dayMs: number; compiled?: CompiledConfig }): CreditPlan {
  const dayStart = utcDayStart(options.dayMs);
  // The daemon's own plan, so that the sources costed are the sources polled. Only their
  // shape is read here, so the rules are not compiled.
  const all = planFromConfig(config, { dayMs: options.dayMs, compile: false });
  // The node's sources cost requests at chain.rpc_url, not credits: counted in the JSON-RPC plan.
  const planned = { ...all, sources: all.sources.filter((s): s is PlannedSource & { definition: { operation: ExplorerSourceOperation } } => !isNodeOperation(s.definition.operation)) };
  const nodeSources = all.sources.filter((s) => isNodeOperation(s.definition.operation));

  // Sources on the same schedule, window and operation tick alike: their day is laid out
  // once (a schedule's day is ~1 ms to lay out, and 10,000 sources share a handful).
  const days = new Map<string, { firings: number[]; tickRequests: number[]; longest: number; requests: number; count: number; cost: number }>();
  const dayOf = (operation: ExplorerSourceOperation, schedule: string, maxWindowBlocks: number) => {
    const perBlock = operation === "blockInternalTransactions";
    const cacheKey = `${perBlock ? "block" : maxWindowBlocks} ${schedule}`;
    let day = days.get(`${operation} ${cacheKey}`);
    if (day !== undefined) return day;
    const firings = firingsOfDay(schedule, dayStart);
    // The first tick of the day covers the blocks since the schedule's last tick before it
    // (yesterday's, or last Friday's for a weekday schedule).
    const before = firings.length === 0 ? undefined : previousFiring(schedule, dayStart);
    let requests = 0;
    let longest = 0;
    const tickRequests = firings.map((second, i) => {
      const previous = i > 0 ? (firings[i - 1] as number) : (before ?? second - 1);
      const blocks = (second - previous) * BLOCKS_PER_SECOND;
      longest = Math.max(longest, second - previous);
      const ticked = perBlock ? blocks : Math.max(1, Math.ceil(blocks / maxWindowBlocks));
      requests += ticked;
      return ticked;
    });
    day = { firings, tickRequests, longest, requests, count: 0, cost: OPERATIONS[operation].cost };
    days.set(`${operation} ${cacheKey}`, day);
    return day;
  };

  const sources: SourceCost[] = planned.sources.map((source) => {
    const operation = source.definition.operation;
    const spec = OPERATIONS[operation];
    const perBlock = operation === "blockInternalTransactions";
    const day = dayOf(operation, source.schedule, source.maxWindowBlocks);
    day.count += 1;
    const { firings, requests } = day;
    const typicalWindow = firings.length === 0 ? 1 : perBlock ? 1 : Math.min(source.maxWindowBlocks, Math.max(1, Math.round((DAY_SECONDS * BLOCKS_PER_SECOND) / firings.length)));
    return {
      key: source.key,
      watch: source.watch,
      watches: watchesOf(source),
      description: source.description,
      operation,
      operationNumber: spec.number,
      cost: spec.cost,
      apiPlan: spec.plan,
      schedule: source.schedule,
      maxWindowBlocks: source.maxWindowBlocks,
      ticksPerDay: firings.length,
      longestIntervalSeconds: day.longest,
      requestsPerDay: requests,
      creditsPerDay: requests * spec.cost,
      creditsPerTick: firings.length === 0 ? 0 : (requests * spec.cost) / firings.length,
      recordsPerBlockInOnePage: Math.floor(config.explorer.page_size / typicalWindow),
    };
  });

  const enrichments: EnrichmentCost[] = config.rules.flatMap((rule) =>
    rule.enrich.map((kind) => ({ rule: rule.name, kind, operations: ENRICHMENT_KINDS[kind].operations.map((op) => `${op} (${OPERATIONS[op].number})`), creditsPerLookup: enrichmentCost(kind) })),
  );

  const requestsPerDay = sources.reduce((sum, s) => sum + s.requestsPerDay, 0);
  const creditsPerDay = sources.reduce((sum, s) => sum + s.creditsPerDay, 0);
  const budget = config.explorer.daily_credit_budget;
  let budgetExhaustedAt: string | undefined;
  if (budget !== undefined && creditsPerDay > budget) {
    // Credits spent in each second of the day, all sources together: when the budget runs out.
    const perSecond = new Float64Array(DAY_SECONDS);
    for (const day of days.values()) {
      day.firings.forEach((second, i) => {
        perSecond[second] = (perSecond[second] as number) + (day.tickRequests[i] as number) * day.cost * day.count;
      });
    }
    let spent = 0;
    for (let second = 0; second < DAY_SECONDS; second++) {
      spent += perSecond[second] as number;
      if (spent > budget) {
        budgetExhaustedAt = new Date(dayStart + second * 1000).toISOString();
        break;
      }
    }
  }

  const rps = config.explorer.requests_per_second;
  const spare = Math.max(0, rps - requestsPerDay / DAY_SECONDS);
  const behindRequests = (blocks: number, source: { definition: { operation: SourceOperation }; maxWindowBlocks: number }) =>
    isPerBlockOperation(source.definition.operation) ? blocks : Math.ceil(blocks / source.maxWindowBlocks);
  const hourBehind = planned.sources.reduce((sum, source) => sum + behindRequests(3600 * BLOCKS_PER_SECOND, source), 0);
  const startRequests = planned.sources.reduce((sum, source) => sum + (source.start.kind === "relative" ? behindRequests(source.start.blocks, source) : 0), 0);
  const catchUp: CatchUp = {
    requestsPerHourBehind: hourBehind,
    spareRequestsPerSecond: spare,
    secondsPerHourBehind: spare > 0 ? hourBehind / spare : null,
    startRequests,
    startSeconds: spare > 0 ? startRequests / spare : null,
  };

  const result: CreditPlan = {
    day: new Date(dayStart).toISOString().slice(0, 10),
    sources,
    enrichments,
    idleWatches: planned.idleWatches,
    choices: planned.choices,
    requestsPerDay,
    creditsPerDay,
    requestsPerSecond: requestsPerDay / DAY_SECONDS,
    steadyStateShare: STEADY_STATE_SHARE,
    catchUp,
    budget,
    budgetExhaustedAt,
    warnings: [],
    rpc: planRpcCalls(config, { dayMs: options.dayMs, compiled: options.compiled ?? compiledOf(config), nodeSources, sources: planned.sources }),
  };
  result.warnings = warningsOf(config, result);
  return result;
}

/** What one choice of `source` for every log-reading watch would cost a day. */
export interface SourceChoiceCost {
  source: LogSource;
  /** Every log-reading watch of the config already reads so. */
  current: boolean;
  creditsPerDay: number;
  explorerRequestsPerDay: number;
  /** JSON-RPC calls a day of the node's log sources (eth_getLogs; NFT transfers' block times not counted) and, with chain.traces, its traces source. */
  nodeRequestsPerDay: number;
}

/**
 * The config costed three times, with every contract, collection and account watch's
 * `source` (with chain.traces every_block's too) set to explorer, node and both: for
 * `kaiawatch plan`'s comparison. Empty when the config has no such watch.
 */
export function planSourceChoices(config: Config, options: { dayMs: number; compiled?: CompiledConfig }): SourceChoiceCost[] {
  // A list watch is read from the node whatever the choice: it is costed as it is, in each.
  const readers = new Set<WatchConfig>(config.watches.filter((w) => w.kind === "contract" || w.kind === "collection" || w.kind === "account" || (config.chain.traces && w.kind === "every_block")));
  if (readers.size === 0) return [];
  return LOG_SOURCE_CHOICES.map((source) => {
    const plan = planCredits({ ...config, watches: config.watches.map((w) => (readers.has(w) ? { ...w, source } : w)) }, options);
    return {
      source,
      current: [...readers].every((w) => w.source === source),
      creditsPerDay: plan.creditsPerDay,
      explorerRequestsPerDay: plan.requestsPerDay,
      nodeRequestsPerDay: plan.rpc.logSources.reduce((sum, s) => sum + s.callsPerDay, 0) + (plan.rpc.traces?.callsPerDay ?? 0),
    };
  });
}

const LOG_SOURCE_CHOICES: readonly LogSource[] = ["explorer", "node", "both"];

function warningsOf(config: Config, plan: CreditPlan): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  for (const s of plan.sources) {
    const where = `watch ${s.watch} (${s.description})`;
    if (s.apiPlan === "PRO_PLUS") {
      warnings.push({ code: "pro_plus", message: `${where} uses operation ${s.operationNumber} (${s.operation}), which only the PRO_PLUS API plan has, at ${s.cost} credits a request` });
    }
    if (s.ticksPerDay === 0) {
      warnings.push({ code: "no_ticks", message: `${where}: the schedule "${s.schedule}" does not fire on ${plan.day}` });
    } else if (s.operation !== "blockInternalTransactions" && s.longestIntervalSeconds > s.maxWindowBlocks) {
      const windows = Math.ceil(s.longestIntervalSeconds / s.maxWindowBlocks);
      warnings.push({
        code: "window",
        message: `${where}: the schedule "${s.schedule}" waits up to ${s.longestIntervalSeconds} s between ticks, more than max_window_blocks (${s.maxWindowBlocks}) blocks at one block a second; such a tick needs ${windows} windows (requests) to keep up (counted above). Tick at least every ${s.maxWindowBlocks} s`,
      });
    }
  }
  const rps = config.explorer.requests_per_second;
  const steady = rps * plan.steadyStateShare;
  if (plan.requestsPerSecond > rps) {
    warnings.push({ code: "rate", message: `the sources need ${plan.requestsPerSecond.toFixed(2)} requests a second on average, more than explorer.requests_per_second (${rps}): they will fall behind the chain, and no alternative of the planner fits` });
  } else if (plan.requestsPerSecond > steady) {
    const hour = plan.catchUp.secondsPerHourBehind;
    warnings.push({
      code: "rate",
      message: `the sources need ${plan.requestsPerSecond.toFixed(2)} requests a second on average, more than ${plan.steadyStateShare * 100}% of explorer.requests_per_second (${steady.toFixed(2)} of ${rps}), which kaiawatch leaves for catching up, and no alternative of the planner fits: with ${plan.catchUp.spareRequestsPerSecond.toFixed(2)} requests a second spare, an hour behind (${plan.catchUp.requestsPerHourBehind.toLocaleString("en-US")} requests) takes ${hour === null ? "forever" : formatSeconds(hour)} to catch up`,
    });
  }
  if (plan.budget !== undefined && plan.budgetExhaustedAt !== undefined) {
    const at = plan.budgetExhaustedAt.slice(11, 16);
    warnings.push({
      code: "budget",
      message: `${plan.creditsPerDay.toLocaleString("en-US")} credits a day exceed explorer.daily_credit_budget (${plan.budget.toLocaleString("en-US")}): the budget runs out at about ${at} UTC, and polling pauses until 00:00 UTC`,
    });
  }
  return warnings;
}

/** "45 min", "2.5 h": how long a catch-up takes. */
export function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} s`;
  if (seconds < 5400) return `${Math.ceil(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
