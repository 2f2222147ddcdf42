import { ZERO_ADDRESS } from "./abi.js";
import type { Collection, NftTokenMeta, World } from "./world.js";

/** One token id of a collection: its holders (one for KIP17/ERC721, many for KIP37/ERC1155). */
export interface NftToken {
  contract: string;
  tokenId: string;
  /** A stable numeric id for `NftMetadata.id`. */
  id: number;
  meta: NftTokenMeta;
  holders: Map<string, bigint>;
  minted: bigint;
  burned: bigint;
  transfers: number;
  lastUpdated: string;
}

interface CollectionState {
  tokens: Map<string, NftToken>;
  /** Token ids with at least one holder, for picking one to move (swap-remove keeps it O(1)). */
  live: string[];
  livePos: Map<string, number>;
  sorted: string[] | undefined;
  version: number;
}

/**
 * Who holds which NFT now, kept up to date as transfers are appended: the inventory
 * operations and the NFT item operation read it, and the generator reads it so that
 * every transfer moves a token its sender actually holds.
 */
export class NftState {
  private readonly collections = new Map<string, CollectionState>();
  /** account → token keys (`contract|tokenId`) it holds. */
  private readonly holdings = new Map<string, Set<string>>();
  private readonly supplies = new Map<string, bigint>();
  private nextId = 1;

  constructor(private readonly world: World) {
    for (const c of world.collections) this.collections.set(c.address, { tokens: new Map(), live: [], livePos: new Map(), sorted: undefined, version: 0 });
  }

  known(contract: string): boolean {
    return this.collections.has(contract.toLowerCase());
  }

  token(contract: string, tokenId: string): NftToken | undefined {
    return this.collections.get(contract.toLowerCase())?.tokens.get(tokenId);
  }

  /** Every token id ever minted in the collection, ascending by number. */
  tokenIds(contract: string): string[] {
    const state = this.collections.get(contract.toLowerCase());
    if (!state) return [];
    state.sorted ??= [...state.tokens.keys()].sort(compareIds);
    return state.sorted;
  }

  liveTokens(contract: string): readonly string[] {
    return this.collections.get(contract)?.live ?? [];
  }

  /** Token keys (`contract|tokenId`) the account holds now. */
  held(account: string): ReadonlySet<string> {
    return this.holdings.get(account.toLowerCase()) ?? new Set();
  }

  /** Changes whenever a token of the collection moves: a key for caches. */
  version(contract: string): number {
    return this.collections.get(contract.toLowerCase())?.version ?? 0;
  }

  /** Minted minus burned, over every token id of the collection. */
  supply(contract: string): bigint {
    return this.supplies.get(contract.toLowerCase()) ?? 0n;
  }

  count(contract: string): number {
    return this.collections.get(contract.toLowerCase())?.tokens.size ?? 0;
  }

  apply(collection: Collection | string, tokenId: string, from: string, to: string, count: bigint, datetime: string): void {
    const contract = (typeof collection === "string" ? collection : collection.address).toLowerCase();
    const state = this.collections.get(contract);
    if (!state) return;
    const fromLc = from.toLowerCase();
    const toLc = to.toLowerCase();
    let token = state.tokens.get(tokenId);
    if (!token) {
      const meta = this.world.tokenMeta(this.world.collections.find((c) => c.address === contract) as Collection, tokenId);
      token = { contract, tokenId, id: this.nextId++, meta, holders: new Map(), minted: 0n, burned: 0n, transfers: 0, lastUpdated: datetime };
      state.tokens.set(tokenId, token);
      state.sorted = undefined;
    }
    state.version += 1;
    token.transfers += 1;
    token.lastUpdated = datetime;
    if (fromLc === ZERO_ADDRESS) {
      token.minted += count;
      this.supplies.set(contract, this.supply(contract) + count);
    }
    else this.change(state, token, fromLc, -count);
    if (toLc === ZERO_ADDRESS) {
      token.burned += count;
      this.supplies.set(contract, this.supply(contract) - count);
    }
    else this.change(state, token, toLc, count);
  }

  private change(state: CollectionState, token: NftToken, account: string, delta: bigint): void {
    const key = `${token.contract}|${token.tokenId}`;
    const next = (token.holders.get(account) ?? 0n) + delta;
    if (next > 0n) {
      token.holders.set(account, next);
      let set = this.holdings.get(account);
      if (!set) this.holdings.set(account, (set = new Set()));
      set.add(key);
    } else {
      token.holders.delete(account);
      this.holdings.get(account)?.delete(key);
    }
    const isLive = token.holders.size > 0;
    const pos = state.livePos.get(token.tokenId);
    if (isLive && pos === undefined) {
      state.livePos.set(token.tokenId, state.live.length);
      state.live.push(token.tokenId);
    } else if (!isLive && pos !== undefined) {
      const last = state.live.pop() as string;
      if (last !== token.tokenId) {
        state.live[pos] = last;
        state.livePos.set(last, pos);
      }
      state.livePos.delete(token.tokenId);
    }
  }
}

export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
