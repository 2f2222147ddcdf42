import { EVENTS } from "./abi.js";
import { parseKaia } from "./amounts.js";
import type { Chain, TxInfo } from "./chain.js";
import type { World } from "./world.js";

/**
 * What the world's actors hold before the first block. Generated transfers are random
 * walks (and routers pay out more than they take in), so the allocation is large enough
 * that no generated chain of realistic length drives a balance below zero. An address
 * outside the world starts at 0, so that a test funding it through `addBlock` sees exactly
 * the amounts it chose.
 */
export const GENESIS_KEI = 10n ** 12n * 10n ** 18n;
export const GENESIS_WHOLE_TOKENS = 10n ** 12n;

/** One address's balance after each block that changed it, ascending. */
interface History {
  blocks: number[];
  values: bigint[];
}

/**
 * KAIA and KIP-7 balances over the simulated chain, derived from its records and nothing
 * else: KAIA moves by the value of the calls (the transaction's own call and its internal
 * calls) of successful transactions; a token moves by the Transfer(address,address,uint256)
 * logs (three topics: not the ERC-721 event of the same name) of successful transactions.
 * Fees are not modelled. So a balance at block N is its genesis amount plus the sum of the
 * transfers up to N, which is what the tests check against the served records.
 *
 * Built lazily, on the first balance asked after new blocks: a chain of millions of records
 * that nobody asks a balance of (the benchmarks) pays nothing for it.
 */
export class Balances {
  private readonly kaia = new Map<string, History>();
  private readonly tokens = new Map<string, History>();
  private readonly genesisKaia = new Map<string, bigint>();
  private readonly genesisToken = new Map<string, bigint>();
  /** Blocks of the chain already applied. */
  private applied = 0;

  constructor(
    world: World,
    private readonly chain: Chain,
  ) {
    const actors = [...world.wallets, ...world.routers, world.proxy, world.implementation, world.factory];
    for (const a of actors) this.genesisKaia.set(a, GENESIS_KEI);
    for (const t of world.tokens) for (const w of world.wallets) this.genesisToken.set(`${t.address}|${w}`, GENESIS_WHOLE_TOKENS * 10n ** BigInt(t.decimals));
  }

  /** Applies the blocks appended since the last call. */
  private catchUp(): void {
    const blocks = this.chain.blocks;
    for (; this.applied < blocks.length; this.applied++) {
      const block = blocks[this.applied] as (typeof blocks)[number];
      this.applyBlock(block.number, block.txs);
    }
  }

  private applyBlock(block: number, txs: readonly TxInfo[]): void {
    const kaia = new Map<string, bigint>();
    const tokens = new Map<string, bigint>();
    const add = (map: Map<string, bigint>, key: string, delta: bigint) => map.set(key, (map.get(key) ?? 0n) + delta);
    for (const tx of txs) {
      if (tx.status !== "Success") continue;
      for (const call of tx.calls) {
        if (call.error !== undefined || call.to === undefined) continue;
        const kei = keiOf(call.amount);
        if (kei === 0n) continue;
        add(kaia, call.from, -kei);
        add(kaia, call.to, kei);
      }
      for (const log of tx.logs) {
        const transfer = transferOf(log);
        if (!transfer) continue;
        add(tokens, `${log.contract}|${transfer.from}`, -transfer.value);
        add(tokens, `${log.contract}|${transfer.to}`, transfer.value);
      }
    }
    this.record(this.kaia, this.genesisKaia, kaia, block);
    this.record(this.tokens, this.genesisToken, tokens, block);
  }

  /** KAIA in kei after block `block` (genesis before the first block). May be negative if a test's chosen records overspend. */
  kaiaAt(address: string, block: number): bigint {
    this.catchUp();
    const a = address.toLowerCase();
    return valueAt(this.kaia.get(a), block) ?? this.genesisKaia.get(a) ?? 0n;
  }

  /** Base units of `token` held by `owner` after block `block`. */
  tokenAt(token: string, owner: string, block: number): bigint {
    this.catchUp();
    const key = `${token.toLowerCase()}|${owner.toLowerCase()}`;
    return valueAt(this.tokens.get(key), block) ?? this.genesisToken.get(key) ?? 0n;
  }

  private record(histories: Map<string, History>, genesis: Map<string, bigint>, deltas: Map<string, bigint>, block: number): void {
    for (const [key, delta] of deltas) {
      if (delta === 0n) continue;
      let history = histories.get(key);
      if (!history) histories.set(key, (history = { blocks: [], values: [] }));
      const before = history.values.length ? (history.values[history.values.length - 1] as bigint) : (genesis.get(key) ?? 0n);
      history.blocks.push(block);
      history.values.push(before + delta);
    }
  }
}

/** The value after the last change at or before `block`, or undefined when there is none. */
function valueAt(history: History | undefined, block: number): bigint | undefined {
  if (!history) return undefined;
  let lo = 0;
  let hi = history.blocks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((history.blocks[mid] as number) <= block) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : history.values[lo - 1];
}

/** A call's KAIA amount; a test's chosen record may hold something that is not an amount, which moves nothing. */
function keiOf(amount: unknown): bigint {
  return parseKaia(String(amount)) ?? 0n;
}

function transferOf(log: TxInfo["logs"][number]): { from: string; to: string; value: bigint } | undefined {
  if (log.event === EVENTS.transfer20) {
    const [from, to, value] = log.args;
    return from !== undefined && to !== undefined && value !== undefined ? { from, to, value: BigInt(value) } : undefined;
  }
  const custom = log.custom;
  if (!custom || log.topic0 !== EVENTS.transfer20.topic0 || custom.topics.length !== 3 || !/^0x[0-9a-fA-F]{64}$/.test(custom.data ?? "")) return undefined;
  const address = (topic: string | undefined) => (topic && /^0x[0-9a-fA-F]{64}$/.test(topic) ? `0x${topic.slice(26).toLowerCase()}` : undefined);
  const from = address(custom.topics[1]);
  const to = address(custom.topics[2]);
  return from && to ? { from, to, value: BigInt(custom.data as string) } : undefined;
}
