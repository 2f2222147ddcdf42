import type { Config } from "../config/types.js";
import type { CompiledConfig } from "../config/compile-config.js";
import { logQueryBatches } from "../chain/get-logs.js";
import { firingsOfDay, utcDayStart } from "./schedule-firings.js";
import type { PlannedSource } from "./poller.js";
import { sourceDayCost } from "./source-day-cost.js";

/** The JSON-RPC calls of one balance watch in a UTC day. */
export interface BalanceWatchCalls {
  watch: string;
  schedule: string;
  readingsPerDay: number;
  /** eth_blockNumber, then one eth_getBalance or balanceOf eth_call per (address, asset) read. */
  callsPerReading: number;
  callsPerDay: number;
}

/** The node source of top-level transactions: one block read per block, whatever the number of watches it serves. */
export interface TransactionSourceCalls {
  key: string;
  /** The account watches it serves. */
  watches: string[];
  schedule: string;
  /** kaia_getBlockReceipts calls a day: one per block, at one block a second. */
  blockReadsPerDay: number;
  callsPerDay: number;
}

/** The node source of internal transactions (chain.traces): one trace a block, whatever the number of watches it serves. */
export interface TraceSourceCalls {
  key: string;
  watches: string[];
  schedule: string;
  /** debug_traceBlockByNumber calls a day: one per block, at one block a second. */
  traceReadsPerDay: number;
  /** The traces and each block's time (eth_getBlockByNumber, for `datetime`; a block without transactions needs none): two a block at most. */
  callsPerDay: number;
}

/** A node log source (eth_getLogs): the same queries a window whatever the number of watches it serves, up to what one request holds. */
export interface LogSourceCalls {
  key: string;
  family: "event_logs" | "nft_transfers";
  watches: string[];
  schedule: string;
  /** Log queries a window: one per filter, or more where chain.max_request_bytes cuts a filter's lists. */
  queriesPerWindow: number;
  /** Log queries a day on a quiet chain (queriesPerWindow a window; more when the node's result or time limit splits one). */
  queriesPerDay: number;
  /** The queries, and not counted: a block time (eth_getBlockByNumber) per block with an NFT transfer, which depends on the chain. */
  callsPerDay: number;
}

/** A source with absence rules: the block time of each window's end, one eth_getBlockByNumber each (docs/absence.md). */
export interface AbsenceSourceCalls {
  key: string;
  rules: string[];
  schedule: string;
  /**
   * Window ends a day on a quiet chain. Not counted: the times of the matching blocks kept
   * (at most at_least a window with matches; most are read once) and a few to place a window
   * in blocks when an alert is sent.
   */
  callsPerDay: number;
}

/** JSON-RPC calls (at chain.rpc_url, not the explorer: no credits) of a config in a UTC day. */
export interface RpcPlan {
  absenceSources: AbsenceSourceCalls[];
  balanceWatches: BalanceWatchCalls[];
  /**
   * The transactions source (absent when no rule reads transactions). Not counted: a
   * debug_traceTransaction per failed transaction of a watched account that reverted, when
   * the node serves it (rare, and public endpoints do not).
   */
  transactions?: TransactionSourceCalls;
  /** The traces source (chain.traces, and a node-read watch's rule reads internal transactions). */
  traces?: TraceSourceCalls;
  /** The node's log sources (source: node or both). */
  logSources: LogSourceCalls[];
  /** decimals() and symbol() of each distinct token of the token and balance watches, once at start-up. */
  startupCalls: number;
  callsPerDay: number;
}

/**
 * Counts the balance watches' readings on their schedules. A reading reads only the assets
 * its rules name: KAIA when a rule's amounts are in KAIA, and each of the watch's tokens
 * when a rule's are in a token (an upper bound: a symbol names one token). The head reads
 * of the explorer sources are not counted: one per tick, shared.
 */
export function planRpcCalls(config: Config, options: { dayMs: number; compiled: CompiledConfig; nodeSources?: readonly PlannedSource[]; sources?: readonly PlannedSource[] }): RpcPlan {
  const dayStart = utcDayStart(options.dayMs);
  const tokens = new Set<string>();
  const balanceWatches: BalanceWatchCalls[] = [];
  for (const watch of config.watches) {
    if (watch.kind === "account" || watch.kind === "accounts" || watch.kind === "balance") for (const token of watch.tokens) tokens.add(token);
    if (watch.kind !== "balance") continue;
    let kaia = false;
    let token = false;
    for (const rule of config.rules) {
      if (rule.watch !== watch.name || rule.source !== "balances") continue;
      const condition = options.compiled.rules.get(rule.name)?.balance;
      if (condition === undefined) continue;
      if (condition.tests.some((t) => t.asset === "KAIA")) kaia = true;
      else token = true;
    }
    if (!kaia && !token) continue;
    const readingsPerDay = firingsOfDay(options.compiled.schedules.get(watch.schedule) ?? watch.schedule, dayStart).length;
    const callsPerReading = 1 + watch.balance.length * ((kaia ? 1 : 0) + (token ? watch.tokens.length : 0));
    balanceWatches.push({ watch: watch.name, schedule: watch.schedule, readingsPerDay, callsPerReading, callsPerDay: readingsPerDay * callsPerReading });
  }
  let transactions: TransactionSourceCalls | undefined;
  const source = options.nodeSources?.find((s) => s.definition.operation === "blockTransactions");
  if (source !== undefined) {
    const { requestsPerDay } = sourceDayCost(source.definition.operation, source.schedule, source.maxWindowBlocks, dayStart);
    transactions = { key: source.key, watches: (source.members ?? []).map((m) => m.watch), schedule: source.schedule, blockReadsPerDay: requestsPerDay, callsPerDay: requestsPerDay };
  }
  let traces: TraceSourceCalls | undefined;
  const traced = options.nodeSources?.find((s) => s.definition.operation === "nodeInternalTransactions");
  if (traced !== undefined) {
    const { requestsPerDay } = sourceDayCost(traced.definition.operation, traced.schedule, traced.maxWindowBlocks, dayStart);
    traces = { key: traced.key, watches: (traced.members ?? []).map((m) => m.watch), schedule: traced.schedule, traceReadsPerDay: requestsPerDay, callsPerDay: 2 * requestsPerDay };
  }
  const logSources: LogSourceCalls[] = [];
  for (const planned of options.nodeSources ?? []) {
    if (planned.definition.operation === "blockTransactions" || planned.definition.operation === "nodeInternalTransactions") continue;
    const { requestsPerDay } = sourceDayCost(planned.definition.operation, planned.schedule, planned.maxWindowBlocks, dayStart);
    // A window asks one query per filter and per part the request limit cuts it into (the reader's own cut).
    const queriesPerWindow = (planned.logFilters ?? []).reduce((sum, filter) => sum + (filter.address?.length === 0 ? 0 : logQueryBatches(filter, config.chain.max_request_bytes).length), 0);
    const queriesPerDay = requestsPerDay * queriesPerWindow;
    logSources.push({ key: planned.key, family: planned.family as LogSourceCalls["family"], watches: [...new Set((planned.members ?? []).map((m) => m.watch))], schedule: planned.schedule, queriesPerWindow, queriesPerDay, callsPerDay: queriesPerDay });
  }
  const absent = new Set(config.rules.filter((rule) => rule.expect !== undefined).map((rule) => rule.name));
  const absenceSources: AbsenceSourceCalls[] = [];
  for (const planned of [...(options.sources ?? []), ...(options.nodeSources ?? [])]) {
    const rules = planned.rules.map((rule) => rule.name).filter((name) => absent.has(name));
    if (rules.length === 0) continue;
    // Window ends: one a window of at most max_window_blocks, as a windowed explorer source asks (not one a block).
    const { requestsPerDay } = sourceDayCost("accountEventLogs", planned.schedule, planned.maxWindowBlocks, dayStart);
    absenceSources.push({ key: planned.key, rules, schedule: planned.schedule, callsPerDay: requestsPerDay });
  }
  const callsPerDay =
    balanceWatches.reduce((sum, w) => sum + w.callsPerDay, 0) + (transactions?.callsPerDay ?? 0) + (traces?.callsPerDay ?? 0) + logSources.reduce((sum, s) => sum + s.callsPerDay, 0) + absenceSources.reduce((sum, s) => sum + s.callsPerDay, 0);
  return { absenceSources, balanceWatches, ...(transactions ? { transactions } : {}), ...(traces ? { traces } : {}), logSources, startupCalls: tokens.size * 2, callsPerDay };
}
