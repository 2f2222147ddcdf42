import { defaultAccountSources, familyOf } from "../families/registry.js";
import { eventTopic } from "../chain/signatures.js";
import { TRANSFER_TOPIC } from "../chain/token-transfer.js";
import type { RecordFamily } from "../model/record.js";
import type { PlannedSource } from "./poller.js";
import type { WitnessRole } from "../model/witness-role.js";
import type { SourceRule } from "./source-rule.js";
import type { StartPosition } from "../model/start-position.js";
import type { SourceDefinition } from "./source.js";
import { chooseSources, type PlanChoice, type PlanRate } from "./choose-sources.js";
import { planTransactionSource } from "./plan-transactions.js";
import { planTraceSource, traceShareDefinition, tracesFromNode } from "./plan-node-traces.js";
import { nodeShareKeys, planNodeLogSources, readsExplorer } from "./plan-node-logs.js";
import { FAMILY_OF_OPERATION, sourceKey } from "./source.js";
import { rulesByWatch } from "./rules-by-watch.js";

/** The parts of a watch the planner reads (the validated config's watch has them all). */
export interface WatchInput {
  name: string;
  account?: string;
  sources?: readonly RecordFamily[];
  nft_contract?: string;
  /** Account watch: KIP-7 token contracts whose Transfer logs are watched. */
  tokens?: readonly string[];
  collection?: string;
  token_id?: string;
  contract?: string;
  events?: readonly string[];
  /** Accounts watch (read from the node only): the accounts whose token and NFT transfers are watched. */
  accounts?: readonly string[];
  /** Contracts watch (read from the node only): the contracts whose event logs are watched. */
  contracts?: readonly string[];
  every_block?: boolean;
  schedule?: string;
  start?: StartPosition;
  max_window_blocks?: number;
  /** auto (default): the planner's cheapest; own: the watch's own sources; shared: a shared source where one sees its records. */
  via?: "auto" | "own" | "shared";
  /** Where its log families are read: explorer (default), node, or both (plan-node-logs.ts). */
  source?: "explorer" | "node" | "both";
}

export interface RuleInput {
  name: string;
  watch: string;
  /** A record family, or "balances" (a balance watch's rules have no explorer source). */
  source?: RecordFamily | "balances";
}

export interface PlanInput<R extends RuleInput, W extends WatchInput> {
  network: string;
  watches: readonly W[];
  rules: readonly R[];
  defaults: { schedule: string; start: StartPosition; max_window_blocks: number };
  /** The key's API plan: operation 7 only on PRO_PLUS. Default FREE. */
  apiPlan?: "FREE" | "PRO_PLUS";
  /** explorer.requests_per_second, for the whole config: the chosen sources may use STEADY_STATE_SHARE of it on average. Default: no limit. */
  requestsPerSecond?: number;
  /** The UTC day whose schedules are costed (default: a fixed Monday, so the choice does not change with the date). */
  dayMs?: number;
  /** chain.traces: node-read watches read their internal transactions from the node's traces (plan-node-traces.ts). */
  traces?: boolean;
  /**
   * Compiles a rule for one of its sources (the watched account matters for `direction`,
   * the definition's token contract for the token fields of a token watch).
   */
  compileRule: (rule: R, watch: W, family: RecordFamily, definition: SourceDefinition) => SourceRule;
}

export interface Plan {
  sources: PlannedSource[];
  /** Watches no rule reads: they would spend credits for nothing, so they are not polled. */
  idleWatches: string[];
  /** The planner's choices, one per group of watches whose sources could be shared: chosen and rejected alternatives with their cost. */
  choices: PlanChoice[];
  /** The whole plan's request rate against explorer.requests_per_second (see STEADY_STATE_SHARE). */
  rate: PlanRate;
  /** Where a watch's positions are kept under the other reader, for a watch switched between them (the poller's start). */
  formerKeys?: FormerKeys;
}

// Hashing an event signature (keccak) is ~20 µs; 10,000 watches name a handful of events.
const topics = new Map<string, string>();
function topicOf(event: string): string {
  let topic = topics.get(event);
  if (topic === undefined) topics.set(event, (topic = eventTopic(event)));
  return topic;
}

/** The server-side queries a watch needs, one per (operation, address, filter). */
export function definitionsOfWatch(network: string, watch: WatchInput): SourceDefinition[] {
  const lower = (value: string | undefined) => value?.toLowerCase();
  if (watch.account !== undefined) {
    const families = watch.sources ?? (watch.tokens?.length ? [] : defaultAccountSources());
    // The Transfer logs of each token, not of the account: op 11 filters by emitting
    // contract and topic0 only, so the wallet is matched by the rules (from or to). The
    // definition is the same as a contract watch of the token's Transfer events, so every
    // watch of the same token shares one source and one poll.
    const tokens = (watch.tokens ?? []).map((token): SourceDefinition => ({ network, operation: "accountEventLogs", address: lower(token), signature: TRANSFER_TOPIC }));
    // Top-level transactions come from the node, one source for every account (plan-transactions.ts).
    // Each family's account operation (its definition's readers); the node's transactions have none.
    return families.flatMap((family): SourceDefinition[] => {
      const operation = familyOf(family).readers.account;
      if (operation === undefined) return [];
      const definition: SourceDefinition = { network, operation, address: lower(watch.account) };
      // Operation 3 filters by collection too.
      if (operation === "accountNftTransfers") definition.contractAddress = lower(watch.nft_contract);
      return [definition];
    }).concat(tokens);
  }
  if (watch.collection !== undefined) return [{ network, operation: "nftTransfers", address: lower(watch.collection), tokenId: watch.token_id }];
  if (watch.contract !== undefined) {
    const address = lower(watch.contract);
    if (!watch.events || watch.events.length === 0) return [{ network, operation: "accountEventLogs", address }];
    return watch.events.map((event) => ({ network, operation: "accountEventLogs", address, signature: event.startsWith("0x") ? event.toLowerCase() : topicOf(event) }));
  }
  if (watch.every_block) return [{ network, operation: "blockInternalTransactions" }];
  return [];
}

/**
 * The sources of a config: the cheapest set of explorer operations that sees every record
 * each rule needs (see chooseSources). Rules on one source share its poll and its cursor;
 * a shared source filters its records to each watch as that watch's own source would have
 * seen them, so the alerts (and their ids) are the same whichever source serves a watch.
 */
export function planSources<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>): Plan {
  // A watch read from the node alone has no explorer source for its log families, nor, when the node traces blocks, for its internal transactions.
  const plan = chooseSources(input, (network, watch) => {
    const definitions = definitionsOfWatch(network, watch);
    if (readsExplorer(watch)) return definitions;
    const traced = tracesFromNode(watch, input.traces);
    return definitions.filter((d) => !readByNode(d, traced));
  });
  const node = [planTransactionSource(input), planTraceSource(input), ...planNodeLogSources(input)].filter((source) => source !== undefined);
  if (node.length === 0) return { ...plan, formerKeys: formerKeysOf(input, plan.sources) };
  // chooseSources calls a watch idle when it has no explorer source; one read from the node is not.
  const served = new Set(node.flatMap((source) => (source.members ?? []).map((m) => m.watch)));
  const sources = [...plan.sources, ...node];
  return { ...plan, sources, idleWatches: plan.idleWatches.filter((w) => !served.has(w)), formerKeys: formerKeysOf(input, sources) };
}

/** An explorer query whose records the node reads too: its log query's (event logs, NFT transfers), and with `traced` its traces' (internal transactions). */
function readByNode(definition: SourceDefinition, traced: boolean): boolean {
  const family = FAMILY_OF_OPERATION[definition.operation];
  return family === "event_logs" || family === "nft_transfers" || (traced && family === "internal_transactions");
}

/**
 * Where a watch's positions for a family are kept under a reader (`explorer`: its explorer
 * sources' keys; `node`: its node shares'), whatever its `source` now: a watch switched from
 * one reader to the other has no position under its new key yet, and starts from where the
 * other left it (the poller asks this only then). A key some source of the plan polls is that
 * source's cursor, not the watch's (a token's Transfer logs, operation 8, the traces: it moves
 * on for the others it serves, whether or not this watch was read there), and is left out.
 * The transactions source has no explorer counterpart, and a list watch no explorer source.
 */
export type FormerKeys = (watch: string, family: string, reader: WitnessRole) => readonly string[];

function formerKeysOf<R extends RuleInput, W extends WatchInput>(input: PlanInput<R, W>, sources: readonly PlannedSource[]): FormerKeys {
  // Only what the answer needs: the daemon keeps this function as long as it runs, and `input`
  // would keep every compiled rule of the plan's making with it (about 0.6 KB a watch).
  const { network, watches: watchList, rules } = input;
  // Built at the first question: a restart, whose watches all have their positions, asks none.
  // Held weakly: the questions come when the sources first start, all watches' at once on a
  // new store, and the lookups (two map entries a watch, 0.15 KB at 20,000 watches) are then
  // left to the collector; a later question builds them again.
  let lookups: WeakRef<{ watches: Map<string, W>; byWatch: Map<string, R[]>; polled: Set<string> }> | undefined;
  const lookupsNow = () => {
    let found = lookups?.deref();
    if (found === undefined) {
      found = { watches: new Map(watchList.map((w) => [w.name, w])), byWatch: rulesByWatch(rules), polled: new Set(sources.map((source) => source.key)) };
      lookups = new WeakRef(found);
    }
    return found;
  };
  // Not remembered: a watch is asked about once per family when its source first starts, and
  // a memo would hold every watch's answer for the life of the process.
  return (watchName, family, reader) => {
    const { watches, byWatch, polled } = lookupsNow();
    const watch = watches.get(watchName);
    if (watch === undefined) return [];
    const pairs = reader === "explorer" ? definitionsOfWatch(network, watch).map((d) => ({ family: FAMILY_OF_OPERATION[d.operation], key: sourceKey(d) })) : nodeKeysOfWatch(network, watch, byWatch.get(watchName) ?? []);
    const keys: string[] = [];
    for (const pair of pairs) if (pair.family === family && !polled.has(pair.key) && !keys.includes(pair.key)) keys.push(pair.key);
    return keys;
  };
}

/** A watch's keys under the node's log and traces sources, by family, whatever its source now. */
function nodeKeysOfWatch<R extends RuleInput>(network: string, watch: WatchInput, rules: readonly R[]): Array<{ family: string; key: string }> {
  const traces = rules.some((rule) => rule.source === "internal_transactions") ? traceShareDefinition(network, watch) : undefined;
  return [...nodeShareKeys(network, watch, rules), ...(traces === undefined ? [] : [{ family: "internal_transactions", key: sourceKey(traces) }])];
}
