import { camelCaseOf, type FieldSpelling } from "../explorer/spelling.js";
import type { ListResponse } from "../explorer/types.js";
import { API_LIMITS, OPERATIONS, type OperationName } from "../explorer/operations.js";
import type { BlockIndex, Chain } from "./chain.js";
import type { NftState } from "./nft-state.js";
import { compareIds } from "./nft-state.js";
import {
  accountInventoryJson,
  callOfTransactionJson,
  eventLogJson,
  internalTxJson,
  inventoryDetailJson,
  nftItemJson,
  nftTransferJson,
} from "./serialize.js";
import type { Collection, World } from "./world.js";

/** An answer other than 200, in the service's `{code,title,message}` form. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }

  body(): { code: string; title: string; message: string } {
    return { code: this.code, title: this.title, message: this.message };
  }
}

/**
 * A 400 as the real server words it: klaytn/finder-api's INVALID_REQUEST wraps the detail in
 * "Requested parameter is not valid. ({0})" (ApplicationErrorType, messages_en.yml).
 */
export const invalid = (detail: string) => new ApiError(400, "INVALID_REQUEST", "invalid request", `Requested parameter is not valid. (${detail})`);

/** The error answers of klaytn/finder-api (ApplicationErrorType and messages_en.yml), word for word. */
export const SERVER_ERRORS = {
  unauthorized: () => new ApiError(401, "UNAUTHORIZED_ACCESS", "unauthorized access", "Please confirm your authority."),
  /** A 401 that quotes the credential it refused, as some gateways in front of an API answer (SimulatorFaults.unauthorizedQuotesToken). */
  invalidToken: (authorization: string) => new ApiError(401, "UNAUTHORIZED_ACCESS", "unauthorized access", `Invalid token: ${authorization}`),
  /** KaiaScan's plan refusal is not in the predecessor's source; this is its FORBIDDEN answer. */
  forbidden: () => new ApiError(403, "FORBIDDEN", "unauthorized access", "Please confirm your authority."),
  notFoundUrl: (path: string) => new ApiError(404, "NOT_FOUND_URL", "invalid request", `The url(${path}) does not exists.`),
  notFoundTransaction: () => new ApiError(404, "NOT_FOUND_TRANSACTION", "not found transaction", "Transaction does not exists."),
  quota: (type: "requestPerSecond" | "requestPerDay", quotas: number) => new ApiError(429, "API_REQUEST_QUOTA_EXCEEDED", "request limited", `Request quota exceeded. (type:${type}, quotas:${quotas})`),
  maintenance: () => new ApiError(503, "MAINTENANCE", "maintenance of the server", "The service is temporarily unavailable. Please try again in a moment."),
  unavailable: () => new ApiError(503, "SERVICE_UNAVAILABLE", "server error", "The service is temporarily unavailable. Please try again in a moment."),
  internal: () => new ApiError(500, "INTERNAL_SERVER_ERROR", "server error", "An error occurred inside the server."),
};

/**
 * Which of the shapes the service has been seen in the simulator answers with, where the
 * API document and the real server differ or the server has changed between releases.
 */
export interface Dialect {
  /**
   * "server": as klaytn/finder-api answers (the default): `property` holds the served block
   * range as numbers, and a range is clamped to what the indexer reached. "document":
   * explorer-api.md read literally: `property: {}`, amounts as bare JSON numbers.
   */
  name: "server" | "document";
  /** `from`/`to` of operation 1: plain addresses (the predecessor's release) or account summaries (the document). */
  callParties: "address" | "summary";
  /** Operation 9's `nft_type`: beside `nft` (the predecessor's account NFT balances) or inside it (the document). */
  inventoryNftType: "beside" | "inside";
  /** Field names: snake_case as klaytn/finder-api and the document write them, or camelCase as KaiaScan's live documentation shows them. */
  spelling: FieldSpelling;
}

export const SERVER_DIALECT: Dialect = { name: "server", callParties: "address", inventoryNftType: "beside", spelling: "snake_case" };
export const DOCUMENT_DIALECT: Dialect = { name: "document", callParties: "summary", inventoryNftType: "inside", spelling: "snake_case" };

/** Every key of an answer in camelCase (`property`'s keys are already). */
export function camelCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [camelCaseOf(key), camelCaseKeys(inner)]));
}

export interface Route {
  op: OperationName;
  params: Record<string, string>;
}

const ROUTES = (Object.entries(OPERATIONS) as [OperationName, (typeof OPERATIONS)[OperationName]][]).map(([op, def]) => ({
  op,
  regex: new RegExp(`^${def.path.replace(/:[A-Za-z]+/g, "([^/]+)")}$`),
  names: [...def.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string),
}));

/** A malformed escape stays as written, so that validation answers 400 rather than the server failing. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function matchRoute(pathname: string): Route | undefined {
  for (const route of ROUTES) {
    const m = route.regex.exec(pathname);
    if (!m) continue;
    const params: Record<string, string> = {};
    route.names.forEach((name, i) => (params[name] = safeDecode(m[i + 1] as string)));
    return { op: route.op, params };
  }
  return undefined;
}

export interface ApiContext {
  world: World;
  chain: Chain;
  nft: NftState;
  /** The newest block the (lagging) indexer has reached. */
  visibleHead: number;
  dialect: Dialect;
  /** Where counting stops (`total_count` is capped): API_LIMITS.maxTotalCount, as the real server; tests shrink it. */
  countCap: number;
  /** Records the explorer never indexed (SimulatorFaults.missingRecords): absent from every list, counts included. */
  missing?: (record: { tx: { hash: string }; logIndex?: number; callId?: number }) => boolean;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const INTEGER = /^[0-9]{1,18}$/;

function address(value: string | null | undefined, name: string): string {
  if (value == null || !ADDRESS.test(value)) throw invalid(name);
  return value.toLowerCase();
}

function hash(value: string | undefined, name: string): string {
  if (value == null || !HASH.test(value)) throw invalid(name);
  return value.toLowerCase();
}

function integer(value: string, name: string): number {
  if (!INTEGER.test(value)) throw invalid(name);
  return Number(value);
}

function tokenId(value: string, name: string): string {
  if (/^[0-9]{1,78}$/.test(value)) return BigInt(value).toString();
  if (/^0x[0-9a-fA-F]{1,64}$/.test(value)) return BigInt(value).toString();
  throw invalid(name);
}

interface Paging {
  page: number;
  size: number;
  /** ApiContext.countCap. */
  cap: number;
}

function paging(query: URLSearchParams, cap: number): Paging {
  const pageText = query.get("page");
  const sizeText = query.get("size");
  const page = pageText === null ? 1 : integer(pageText, "page");
  const size = sizeText === null ? API_LIMITS.defaultPageSize : integer(sizeText, "size");
  if (page < 1) throw invalid("page must be at least 1");
  if (size < 1 || size > API_LIMITS.maxPageSize) throw invalid(`size must be between 1 and ${API_LIMITS.maxPageSize}`);
  return { page, size, cap };
}

/** Total pages over the capped count; a page past the last is refused (page 1 of nothing is an empty answer). */
function pageWindow(count: number, p: Paging): { total: number; totalPage: number; offset: number; take: number } {
  const total = Math.min(count, p.cap);
  const totalPage = Math.ceil(total / p.size);
  // klaytn/finder-api PageUtils.checkPageParameter: page 1 of nothing is an empty answer.
  if (p.page > Math.max(totalPage, 1)) throw invalid("totalPage is over.");
  const offset = (p.page - 1) * p.size;
  return { total, totalPage, offset, take: Math.max(0, Math.min(p.size, total - offset)) };
}

/**
 * The list wrapper (klaytn/finder-api ScopePage). `property` is the served block range of a
 * windowed request in the server's dialect (BlockRangeService.getBlockRangeCondition), left
 * out otherwise (nulls are omitted); the document's dialect sends an empty object.
 */
function envelope<T>(results: T[], p: Paging, total: number, totalPage: number, property: object | undefined, dialect: Dialect): ListResponse<T> {
  const paging = { total_count: total, current_page: p.page, last: p.page >= totalPage, total_page: totalPage };
  if (dialect.name === "document") return { results, paging, property: {} };
  return property === undefined ? { results, paging } : { results, paging, property };
}

/** A newest-first page of the records in [lo, hi) of an ascending index. */
function descPage<R extends { block: number }, T>(index: BlockIndex<R> | undefined, lo: number, hi: number, p: Paging, map: (r: R) => T, property: object | undefined, dialect: Dialect): ListResponse<T> {
  const w = pageWindow(hi - lo, p);
  const results: T[] = [];
  const items = index?.items ?? [];
  for (let i = 0; i < w.take; i++) results.push(map(items[hi - 1 - w.offset - i] as R));
  return envelope(results, p, w.total, w.totalPage, property, dialect);
}

/** A page of a list already in the API's order. */
function arrayPage<R, T>(items: readonly R[], p: Paging, map: (r: R) => T, dialect: Dialect): ListResponse<T> {
  const w = pageWindow(items.length, p);
  return envelope(items.slice(w.offset, w.offset + w.take).map(map), p, w.total, w.totalPage, undefined, dialect);
}

/** The server's widest range (FinderServerPagingIntervalConfig: 1,000 blocks for every list kaiawatch reads). */
const BLOCK_INTERVAL = API_LIMITS.maxBlockRange;

/**
 * The block bounds of a listing, and the range as the answer's `property` tells it.
 *
 * Server dialect (klaytn/finder-api BlockRangeService.getBlockRange): both bounds are first
 * clamped to the newest block the indexer reached, then start <= end and end - start <=
 * 1,000 are checked; one bound alone spans 1,000 blocks from it. A range past the indexer
 * is answered for the part it has, and `property.blockNumberEnd` says where that ends.
 *
 * Document dialect: a bound left out is open; both given must satisfy start <= end and span
 * at most 1,000 blocks; the indexer's lag caps the top silently.
 */
function blockRange(query: URLSearchParams, visibleHead: number, dialect: Dialect): { from: number; to: number; property: object | undefined } {
  const startText = query.get("blockNumberStart");
  const endText = query.get("blockNumberEnd");
  const start = startText === null ? undefined : integer(startText, "blockNumberStart");
  const end = endText === null ? undefined : integer(endText, "blockNumberEnd");
  if (dialect.name === "server" && (start !== undefined || end !== undefined)) {
    const latest = Math.max(0, visibleHead);
    let from: number;
    let to: number;
    if (start !== undefined && end !== undefined) {
      from = Math.min(start, latest);
      to = Math.min(end, latest);
      if (from > to) throw invalid("check range of block. (start number must be before end)");
      if (to - from > BLOCK_INTERVAL) throw invalid("check range of block. (max interval over)");
    } else if (start !== undefined) {
      from = Math.min(start, latest);
      to = Math.min(from + BLOCK_INTERVAL, latest);
    } else {
      to = Math.min(end as number, latest);
      from = Math.max(0, to - BLOCK_INTERVAL);
    }
    return { from, to, property: { blockNumberStart: from, blockNumberEnd: to, blockInterval: BLOCK_INTERVAL } };
  }
  if (start !== undefined && end !== undefined) {
    if (start > end) throw invalid("blockNumberStart must not be greater than blockNumberEnd");
    if (end - start + 1 > API_LIMITS.maxBlockRange) throw invalid(`block range must not exceed ${API_LIMITS.maxBlockRange} blocks`);
  }
  return { from: start ?? 0, to: Math.min(end ?? Number.MAX_SAFE_INTEGER, visibleHead), property: undefined };
}

function signature(query: URLSearchParams): string | undefined {
  const value = query.get("signature");
  if (value === null || value === "") return undefined;
  return hash(value, "signature");
}

function ranged<R extends { block: number }, T>(index: BlockIndex<R> | undefined, query: URLSearchParams, ctx: ApiContext, p: Paging, map: (r: R) => T): ListResponse<T> {
  const { from, to, property } = blockRange(query, ctx.visibleHead, ctx.dialect);
  const [lo, hi] = index ? index.range(from, to) : [0, 0];
  const missing = ctx.missing;
  if (missing === undefined) return descPage(index, lo, hi, p, map, property, ctx.dialect);
  // Newest first, as descPage serves them, without the records never indexed.
  const kept = (index?.items ?? []).slice(lo, hi).filter((record) => !missing(record as R & { tx: { hash: string } })).reverse();
  const w = pageWindow(kept.length, p);
  return envelope(kept.slice(w.offset, w.offset + w.take).map(map), p, w.total, w.totalPage, property, ctx.dialect);
}

function collectionOf(ctx: ApiContext, contract: string): Collection | undefined {
  return ctx.world.collections.find((c) => c.address === contract);
}

interface InventoryRow {
  collection: Collection;
  tokenId: string;
  holder: string;
  count: bigint;
}

const inventoryCache = new WeakMap<NftState, Map<string, { version: number; rows: InventoryRow[] }>>();

/** Every (token id, holder) of a collection, by token id then holder; rebuilt only after the collection changed. */
function inventoryRows(ctx: ApiContext, collection: Collection): InventoryRow[] {
  let cache = inventoryCache.get(ctx.nft);
  if (!cache) inventoryCache.set(ctx.nft, (cache = new Map()));
  const version = ctx.nft.version(collection.address);
  const hit = cache.get(collection.address);
  if (hit && hit.version === version) return hit.rows;
  const rows: InventoryRow[] = [];
  for (const id of ctx.nft.tokenIds(collection.address)) {
    const token = ctx.nft.token(collection.address, id);
    if (!token) continue;
    for (const [holder, count] of [...token.holders].sort((a, b) => (a[0] < b[0] ? -1 : 1))) rows.push({ collection, tokenId: id, holder, count });
  }
  cache.set(collection.address, { version, rows });
  return rows;
}

/** Answers one operation with its 200 body, or throws ApiError. */
export function answer(ctx: ApiContext, route: Route, query: URLSearchParams): unknown {
  const { chain, world, nft } = ctx;
  const params = route.params;
  const visibleTx = (h: string) => {
    const tx = chain.tx(h);
    return tx && tx.block <= ctx.visibleHead ? tx : undefined;
  };
  switch (route.op) {
    case "transactionInternalTransactions": {
      const h = hash(params.transactionHash, "transactionHash");
      const p = paging(query, ctx.countCap);
      const tx = visibleTx(h);
      if (!tx) throw SERVER_ERRORS.notFoundTransaction();
      return arrayPage(tx.calls, p, (r) => callOfTransactionJson(world, r, ctx.dialect.callParties), ctx.dialect);
    }
    case "nftItem": {
      const contract = address(params.tokenAddress, "tokenAddress");
      const id = tokenId(params.tokenId ?? "", "tokenId");
      const collection = collectionOf(ctx, contract);
      if (!collection) throw new ApiError(404, "NOT_FOUND_NFT", "not found nft", "Nft does not exist.");
      const token = nft.token(contract, id);
      if (!token) throw new ApiError(404, "NOT_FOUND_NFT_ITEM", "not found nft token item", "Nft token item does not exist.");
      return nftItemJson(world, nft, collection, token);
    }
    case "accountNftTransfers": {
      const account = address(params.accountAddress, "accountAddress");
      const contractText = query.get("contractAddress");
      const p = paging(query, ctx.countCap);
      const index = contractText ? chain.nftsByAccountContract.get(`${account}|${address(contractText, "contractAddress")}`) : chain.nftsByAccount.get(account);
      return ranged(index, query, ctx, p, nftTransferJson);
    }
    case "nftTransfers": {
      const contract = address(params.tokenAddress, "tokenAddress");
      const idText = query.get("tokenId");
      const p = paging(query, ctx.countCap);
      const index = idText ? chain.nftsByContractToken.get(`${contract}|${tokenId(idText, "tokenId")}`) : chain.nftsByContract.get(contract);
      return ranged(index, query, ctx, p, nftTransferJson);
    }
    case "transactionNftTransfers": {
      const h = hash(params.transactionHash, "transactionHash");
      const p = paging(query, ctx.countCap);
      return arrayPage(visibleTx(h)?.nfts ?? [], p, nftTransferJson, ctx.dialect);
    }
    case "nftInventoryDetails": {
      const contract = address(params.tokenAddress, "tokenAddress");
      const keyword = query.get("keyword");
      const p = paging(query, ctx.countCap);
      const collection = collectionOf(ctx, contract);
      let rows = collection ? inventoryRows(ctx, collection) : [];
      if (keyword) {
        if (ADDRESS.test(keyword)) rows = rows.filter((r) => r.holder === keyword.toLowerCase());
        else {
          const id = tokenId(keyword, "keyword");
          rows = rows.filter((r) => r.tokenId === id);
        }
      }
      return arrayPage(rows, p, (r) => inventoryDetailJson(world, r.collection, nft.token(contract, r.tokenId)!, r.holder, r.count), ctx.dialect);
    }
    case "accountInternalTransactions": {
      const account = address(params.accountAddress, "accountAddress");
      const p = paging(query, ctx.countCap);
      return ranged(chain.callsByAccount.get(account), query, ctx, p, internalTxJson);
    }
    case "blockInternalTransactions": {
      const number = integer(params.blockNumber ?? "", "blockNumber");
      const p = paging(query, ctx.countCap);
      const block = number <= ctx.visibleHead ? chain.block(number) : undefined;
      const calls = block?.calls ?? [];
      return arrayPage(ctx.missing === undefined ? calls : calls.filter((call) => ctx.missing?.(call) !== true), p, internalTxJson, ctx.dialect);
    }
    case "accountNftInventories": {
      const account = address(params.accountAddress, "accountAddress");
      const excludeText = query.get("excludeIfTokenUriIsEmpty");
      if (excludeText !== null && excludeText !== "true" && excludeText !== "false") throw invalid("excludeIfTokenUriIsEmpty");
      const exclude = excludeText !== "false";
      const p = paging(query, ctx.countCap);
      const rows: { collection: Collection; tokenId: string; count: bigint; uri: string }[] = [];
      for (const key of nft.held(account)) {
        const [contract, id] = key.split("|") as [string, string];
        const collection = collectionOf(ctx, contract);
        const token = nft.token(contract, id);
        if (!collection || !token) continue;
        if (exclude && token.meta.uri === "") continue;
        rows.push({ collection, tokenId: id, count: token.holders.get(account) ?? 0n, uri: token.meta.uri });
      }
      rows.sort((a, b) => a.collection.index - b.collection.index || compareIds(a.tokenId, b.tokenId));
      return arrayPage(rows, p, (r) => accountInventoryJson(nft, r.collection, nft.token(r.collection.address, r.tokenId)!, r.count, ctx.dialect.inventoryNftType), ctx.dialect);
    }
    case "transactionEventLogs": {
      const h = hash(params.transactionHash, "transactionHash");
      const sig = signature(query);
      const p = paging(query, ctx.countCap);
      const logs = (visibleTx(h)?.logs ?? []).filter((l) => ctx.missing?.(l) !== true);
      return arrayPage(sig ? logs.filter((l) => l.topic0 === sig) : logs, p, eventLogJson, ctx.dialect);
    }
    case "accountEventLogs": {
      const account = address(params.accountAddress, "accountAddress");
      const sig = signature(query);
      const p = paging(query, ctx.countCap);
      const index = sig ? chain.logsByContractTopic.get(`${account}|${sig}`) : chain.logsByContract.get(account);
      return ranged(index, query, ctx, p, eventLogJson);
    }
  }
}
