import { ExplorerInvalidParameterError } from "./errors.js";
import { API_LIMITS, OPERATIONS, type OperationName } from "./operations.js";

/** `page` (>= 1) and `size` (1..2000) of every list operation. */
export interface PageParams {
  page?: number;
  size?: number;
}

/** An inclusive block range: start <= end and at most 1,000 blocks. */
export interface BlockRangeParams {
  blockNumberStart?: number;
  blockNumberEnd?: number;
}

export interface TransactionInternalTransactionsParams extends PageParams { transactionHash: string }
export interface NftItemParams { tokenAddress: string; tokenId: string | bigint }
export interface AccountNftTransfersParams extends PageParams, BlockRangeParams { accountAddress: string; contractAddress?: string }
export interface NftTransfersParams extends PageParams, BlockRangeParams { tokenAddress: string; tokenId?: string | bigint }
export interface TransactionNftTransfersParams extends PageParams { transactionHash: string }
/** `keyword`: an account address or a token id. */
export interface NftInventoryDetailsParams extends PageParams { tokenAddress: string; keyword?: string }
export interface AccountInternalTransactionsParams extends PageParams, BlockRangeParams { accountAddress: string }
export interface BlockInternalTransactionsParams extends PageParams { blockNumber: number }
export interface AccountNftInventoriesParams extends PageParams { accountAddress: string; excludeIfTokenUriIsEmpty?: boolean }
/** `signature`: topic0, 0x + 64 hex. */
export interface TransactionEventLogsParams extends PageParams { transactionHash: string; signature?: string }
export interface AccountEventLogsParams extends PageParams, BlockRangeParams { accountAddress: string; signature?: string }

export interface OperationParams {
  transactionInternalTransactions: TransactionInternalTransactionsParams;
  nftItem: NftItemParams;
  accountNftTransfers: AccountNftTransfersParams;
  nftTransfers: NftTransfersParams;
  transactionNftTransfers: TransactionNftTransfersParams;
  nftInventoryDetails: NftInventoryDetailsParams;
  accountInternalTransactions: AccountInternalTransactionsParams;
  blockInternalTransactions: BlockInternalTransactionsParams;
  accountNftInventories: AccountNftInventoriesParams;
  transactionEventLogs: TransactionEventLogsParams;
  accountEventLogs: AccountEventLogsParams;
}

type Kind = "address" | "hash" | "block" | "page" | "size" | "signature" | "tokenId" | "keyword" | "boolean";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const DIGITS = /^\d+$/;

/** Checks one value; returns the text to send, or a problem description. */
function check(kind: Kind, value: unknown): { text: string } | { problem: string } {
  switch (kind) {
    case "address":
      return typeof value === "string" && ADDRESS.test(value) ? { text: value } : { problem: "expected an address (0x and 40 hex digits)" };
    case "hash":
      return typeof value === "string" && HASH.test(value) ? { text: value } : { problem: "expected a transaction hash (0x and 64 hex digits)" };
    case "signature":
      return typeof value === "string" && HASH.test(value) ? { text: value.toLowerCase() } : { problem: "expected an event signature hash (0x and 64 hex digits)" };
    case "block":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? { text: String(value) } : { problem: "expected a non-negative integer block number" };
    case "page":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? { text: String(value) } : { problem: "expected an integer >= 1" };
    case "size":
      return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= API_LIMITS.maxPageSize
        ? { text: String(value) }
        : { problem: `expected an integer from 1 to ${API_LIMITS.maxPageSize}` };
    case "tokenId":
      if (typeof value === "bigint" && value >= 0n) return { text: value.toString() };
      return typeof value === "string" && DIGITS.test(value) ? { text: value } : { problem: "expected a token id in decimal digits" };
    case "keyword":
      return typeof value === "string" && (ADDRESS.test(value) || DIGITS.test(value)) ? { text: value } : { problem: "expected an account address or a token id" };
    case "boolean":
      return typeof value === "boolean" ? { text: String(value) } : { problem: "expected true or false" };
  }
}

const PAGE = { page: "page", size: "size" } as const;
const RANGE = { blockNumberStart: "block", blockNumberEnd: "block" } as const;

/** Each operation's parameters: which are required, and their kinds. Path parameters are those named in the path. */
const SPECS: { [K in OperationName]: { required: Partial<Record<keyof OperationParams[K], Kind>>; optional: Partial<Record<keyof OperationParams[K], Kind>> } } = {
  transactionInternalTransactions: { required: { transactionHash: "hash" }, optional: PAGE },
  nftItem: { required: { tokenAddress: "address", tokenId: "tokenId" }, optional: {} },
  accountNftTransfers: { required: { accountAddress: "address" }, optional: { contractAddress: "address", ...RANGE, ...PAGE } },
  nftTransfers: { required: { tokenAddress: "address" }, optional: { tokenId: "tokenId", ...RANGE, ...PAGE } },
  transactionNftTransfers: { required: { transactionHash: "hash" }, optional: PAGE },
  nftInventoryDetails: { required: { tokenAddress: "address" }, optional: { keyword: "keyword", ...PAGE } },
  accountInternalTransactions: { required: { accountAddress: "address" }, optional: { ...RANGE, ...PAGE } },
  blockInternalTransactions: { required: { blockNumber: "block" }, optional: PAGE },
  accountNftInventories: { required: { accountAddress: "address" }, optional: { excludeIfTokenUriIsEmpty: "boolean", ...PAGE } },
  transactionEventLogs: { required: { transactionHash: "hash" }, optional: { signature: "signature", ...PAGE } },
  accountEventLogs: { required: { accountAddress: "address" }, optional: { signature: "signature", ...RANGE, ...PAGE } },
};

/**
 * Checks a call's parameters and builds its path with query string (relative to the base
 * URL). Throws ExplorerInvalidParameterError naming the first bad parameter, before anything
 * is sent.
 */
export function buildRequestPath<K extends OperationName>(operation: K, params: OperationParams[K]): string {
  const fail = (parameter: string, problem: string) => new ExplorerInvalidParameterError(operation, parameter, problem);
  if (typeof params !== "object" || params === null) throw fail("params", "expected an object");
  const spec = SPECS[operation] as { required: Record<string, Kind>; optional: Record<string, Kind> };
  const given = params as unknown as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(key in spec.required) && !(key in spec.optional)) throw fail(key, "not a parameter of this operation");
  }
  const values = new Map<string, string>();
  for (const [key, kind] of Object.entries(spec.required)) {
    const value = given[key];
    if (value === undefined) throw fail(key, "required");
    const result = check(kind, value);
    if ("problem" in result) throw fail(key, result.problem);
    values.set(key, result.text);
  }
  for (const [key, kind] of Object.entries(spec.optional)) {
    const value = given[key];
    if (value === undefined) continue;
    const result = check(kind, value);
    if ("problem" in result) throw fail(key, result.problem);
    values.set(key, result.text);
  }
  const start = given.blockNumberStart as number | undefined;
  const end = given.blockNumberEnd as number | undefined;
  if (start !== undefined && end !== undefined) {
    if (start > end) throw fail("blockNumberStart", `greater than blockNumberEnd (${start} > ${end})`);
    if (end - start + 1 > API_LIMITS.maxBlockRange) throw fail("blockNumberEnd", `the range ${start}..${end} spans ${end - start + 1} blocks; at most ${API_LIMITS.maxBlockRange} are allowed`);
  }
  const path = OPERATIONS[operation].path.replace(/:(\w+)/g, (_, name: string) => {
    const text = values.get(name) as string;
    values.delete(name);
    return encodeURIComponent(text);
  });
  if (values.size === 0) return path;
  return `${path}?${new URLSearchParams([...values]).toString()}`;
}
