/** Helpers for the client's tests against the simulator: ground truth in the client's terms. */
import type { InternalTransactionListItem, ListResponse, NftTransfer } from "../../src/explorer/types.js";

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
export const START_BLOCK = 100_000_000;
const TWO_POW_53 = 2n ** 53n;

/** Every record of every page, in the order served. */
export async function collect<T>(pages: AsyncIterable<ListResponse<T>>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...page.results);
  return out;
}

/**
 * The simulator's truth holds integers where the spec says integer (token_count); the client
 * hands every such count out as exact decimal text.
 */
export function asClientTransfer(transfer: NftTransfer): NftTransfer {
  return { ...transfer, token_count: String(transfer.token_count) };
}

/** (block, transaction index, call id) ascending: the order of the truth's internal transactions. */
export function byCallPosition(a: InternalTransactionListItem, b: InternalTransactionListItem): number {
  return a.block_id - b.block_id || a.transaction_index - b.transaction_index || a.call_id - b.call_id;
}

/** A KAIA decimal string as kei. */
export function kei(amount: string): bigint {
  const [whole = "0", fraction = ""] = amount.split(".");
  return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(18, "0"));
}

/** True for an amount a float cannot hold: more than 2^53 kei and all 18 decimals used. */
export function beyondFloat(amount: string): boolean {
  return kei(amount) > TWO_POW_53 && (amount.split(".")[1] ?? "").length === 18;
}

export interface TokenState {
  holders: Map<string, bigint>;
  minted: bigint;
  burned: bigint;
  transfers: number;
}

/** Who holds what after these transfers (oldest first), per token id: replays the chain. */
export function replayTransfers(transfers: NftTransfer[]): Map<string, TokenState> {
  const tokens = new Map<string, TokenState>();
  const move = (state: TokenState, holder: string, delta: bigint) => {
    const next = (state.holders.get(holder) ?? 0n) + delta;
    if (next > 0n) state.holders.set(holder, next);
    else state.holders.delete(holder);
  };
  for (const t of transfers) {
    let state = tokens.get(t.token_id);
    if (!state) tokens.set(t.token_id, (state = { holders: new Map(), minted: 0n, burned: 0n, transfers: 0 }));
    const count = BigInt(t.token_count);
    state.transfers += 1;
    if (t.from === ZERO_ADDRESS) state.minted += count;
    else move(state, t.from, -count);
    if (t.to === ZERO_ADDRESS) state.burned += count;
    else move(state, t.to ?? ZERO_ADDRESS, count);
  }
  return tokens;
}

/** Token ids in numeric order. */
export function compareTokenIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

type MetricLike = { get(): Promise<{ values: { labels: Record<string, unknown>; value: number; metricName?: string }[] }> };

/** The sum of a prom-client metric's values whose labels match. */
export async function metricValue(metric: MetricLike, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
}

/** The number of requests the simulator answered for an operation, per status. */
export function requestsOf(stats: { requests: Record<string, Record<string, number>> }, operation: string): Record<string, number> {
  return stats.requests[operation] ?? {};
}
