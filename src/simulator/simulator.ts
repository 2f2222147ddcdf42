import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KaiawatchError } from "../common/errors.js";
import type { EventLog, InternalTransactionListItem, NftTransfer } from "../explorer/types.js";
import { DOCUMENT_DIALECT, SERVER_DIALECT, SERVER_ERRORS, type Dialect } from "./api.js";
import { createApiHandler } from "./api-handler.js";
import { Chain } from "./chain.js";
import { buildChosenBlock, type ChosenRecords } from "./custom-block.js";
import { DEFAULT_DENSITY, generateBlock, type Density } from "./generate.js";
import { Balances } from "./balances.js";
import { createMeter, type SimulatorStats } from "./meter.js";
import { NftState } from "./nft-state.js";
import { createPollLog, type Poll } from "./poll-log.js";
import { createPrng } from "./prng.js";
import { createResponder } from "./respond.js";
import { createRpcHandler } from "./rpc-handler.js";
import { createTruth } from "./truth.js";
import { createWorld } from "./world.js";

export type { ChosenRecords, ChosenTransaction } from "./custom-block.js";
export type { Dialect } from "./api.js";
export type { SimulatorStats } from "./meter.js";
export type { Poll } from "./poll-log.js";
export { REPLICA_HEADER } from "./poll-log.js";

/** Faults injected into explorer API answers (never into JSON-RPC). Rates are fractions of requests, 0..1. */
export interface SimulatorFaults {
  /** Answer 500, 502 or 503 instead. */
  serverErrorRate?: number;
  /** Delay every answer by this many milliseconds. */
  latencyMs?: number;
  /**
   * Delay every answer by a further 0..N milliseconds, uniformly at random (the seed's own
   * draws): an explorer farther away, whose answers come back out of order.
   */
  latencyJitterMs?: number;
  /** A 200 whose JSON body is cut short. */
  truncateRate?: number;
  /** A 200 whose body is not JSON, or JSON of the wrong shape. */
  malformedRate?: number;
  /** Drop the connection without an answer. */
  resetRate?: number;
  /** Answer every API request 503 MAINTENANCE. */
  maintenance?: boolean;
  /**
   * A list answer that holds one record fewer than its `paging.total_count` says (its last
   * record left out), as from an explorer that counted a block it has not finished indexing.
   */
  shortPageRate?: number;
  /** The next N list answers that hold records are short, as with shortPageRate (counts down to 0). */
  shortPages?: number;
  /** Every record of a list answer without this field, as from a server release that dropped or renamed it. */
  dropField?: string;
  /** A refused key's 401 quotes the Authorization header it was sent (`Invalid token: Bearer …`): a secret in an error body. */
  unauthorizedQuotesToken?: boolean;
  /** JSON-RPC debug_traceTransaction and debug_traceBlockByNumber answer "method not found", as public endpoints do. */
  debugUnavailable?: boolean;
  /**
   * Records the explorer never indexed: left out of every list answer, its count included,
   * as if they did not exist; the chain and the node still have them. Each names a
   * transaction (every record of it) or, with `logIndex`, one of its event logs, with
   * `callId` one of its internal transactions.
   */
  missingRecords?: ReadonlyArray<{ transactionHash: string; logIndex?: number; callId?: number }>;
}

/** The service's own limits; like the faults they can be changed while running. */
export interface SimulatorLimits {
  /** Require `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  requestsPerSecond?: number;
  dailyCreditQuota?: number;
  /** The API serves only blocks <= head - lag; JSON-RPC reports the true head. */
  indexingLagBlocks?: number;
  /**
   * The key's plan: FREE refuses operation 7 (PRO_PLUS) with 403 FORBIDDEN. Default
   * PRO_PLUS, which allows every operation.
   */
  plan?: "FREE" | "PRO_PLUS";
  /**
   * The path JSON-RPC is served at (default "/"): a hosted node's key in its URL (`/v2/KEY`).
   * A POST to any other path gets the API's 404, which quotes the path: a key changed here is
   * a node refusing a revoked key with the key in its answer.
   */
  rpcPath?: string;
  /**
   * Where the API stops counting (`total_count`), API_LIMITS.maxTotalCount (40,000) by
   * default, as the real server: a test of a window too dense to count sets it low, with the
   * daemon's `countCap` beside it, and needs a hundredth of the records.
   */
  countCap?: number;
  /**
   * eth_getLogs/kaia_getLogs: the most logs one query answers; past it the node's error
   * (-32000 "query returned more than 10000 results"). Default 10,000, Kaia's
   * `--api.filter.getLogs.maxitems` default; 0: no limit.
   */
  logResultLimit?: number;
  /**
   * The widest block range one log query may span, as gateways in front of public nodes
   * refuse (-32000 "exceed maximum block range: N"). A Kaia node itself has none, and none is
   * documented for the public endpoints: the default is none.
   */
  logBlockRangeLimit?: number;
  /**
   * A log query over more blocks than this runs out of the node's time (Kaia's
   * `--api.filter.getLogs.deadline`, 10 s by default) and answers -32000 "query timeout
   * exceeded". Default: none (the simulated node is never slow).
   */
  logTimeoutBlocks?: number;
  /**
   * The largest JSON-RPC request body read; over it HTTP 413 "content length too large
   * (N>LIMIT)", as a Kaia node answers past its `--maxRequestContentLength`. Default 524,288
   * (512 KiB), Kaia's default.
   */
  rpcMaxRequestBytes?: number;
}

export interface SimulatorOptions extends SimulatorLimits {
  /** Same seed, same chain, same faults (default 1). */
  seed?: number;
  /** Milliseconds between new blocks; 0 = frozen (the default in-process). */
  blockTime?: number;
  /** The first block's number (default 100,000,000). */
  startBlock?: number;
  /** Blocks generated before serving (default 100). */
  initialBlocks?: number;
  /** Records per block on average (default eventLogs 8, nftTransfers 4, internalTransactions 12). */
  density?: Partial<Density>;
  /** Names, metadata and revert messages full of markup, mentions, CR/LF, bidi and zero-width characters, and 100 KB strings. */
  hostile?: boolean;
  faults?: SimulatorFaults;
  /** 0 = any free port (default). */
  port?: number;
  host?: string;
  /** Clock for the rate limit and the daily quota (default Date.now). */
  now?: () => number;
  /**
   * Which shapes it answers in: "server" (the default) as klaytn/finder-api answers, or
   * "document" as explorer-api.md reads (see Dialect); `callParties` and `inventoryNftType`
   * override the dialect's choice of the two shapes seen for them.
   */
  dialect?: "server" | "document";
  callParties?: Dialect["callParties"];
  inventoryNftType?: Dialect["inventoryNftType"];
  /** Field names: "snake_case" (the default, as klaytn/finder-api) or "camelCase" (as KaiaScan's live documentation shows). */
  spelling?: Dialect["spelling"];
  /** JSON-RPC eth_chainId (default 1001, Kairos). */
  chainId?: number;
}

export interface BlockRange {
  from: number;
  to: number;
}

/** The chain as it is, oldest first: what a complete, gap-free scan must have seen. */
export interface SimulatorTruth {
  accountEventLogs(address: string, range: BlockRange & { signature?: string }): EventLog[];
  accountNftTransfers(address: string, range: BlockRange & { contractAddress?: string }): NftTransfer[];
  nftTransfers(token: string, range: BlockRange & { tokenId?: string }): NftTransfer[];
  accountInternalTransactions(address: string, range: BlockRange): InternalTransactionListItem[];
  blockInternalTransactions(block: number): InternalTransactionListItem[];
  /** A block's time, as its records' `datetime` (undefined past the head). */
  blockDatetime(block: number): string | undefined;
  /** The transactions of a block, by index. */
  blockTransactions(block: number): { hash: string; index: number; from: string; to: string; status: "Success" | "Fail" }[];
  /** Every record of the chain (event logs + NFT transfers + internal transactions). */
  recordCount(): number;
  /**
   * Every explorer API request since the start (or `resetStats()`), oldest first: who polled
   * which window (replica header, operation, subject, block range, page, status).
   */
  polls(): Poll[];
  /** KAIA in kei after `block` (what eth_getBalance serves). */
  kaiaBalance(address: string, block: number): bigint;
  /** Base units of a token held after `block` (what balanceOf serves). */
  tokenBalance(token: string, owner: string, block: number): bigint;
}

export interface SimulatorAddresses {
  wallets: string[];
  /** Fungible tokens (KIP7/ERC20): watch their event logs. */
  tokens: string[];
  /** KIP17/ERC721 and KIP37/ERC1155 collections. */
  nftCollections: string[];
  /** Routers, a multisig proxy and its implementation, a factory: the makers of internal calls. */
  contracts: string[];
  /** The wallet in the most NFT transfers and internal transactions. */
  busyWallet: string;
  /** The token emitting the most event logs. */
  busyToken: string;
  /** The collection with the most transfers. */
  busyCollection: string;
  /** A KIP37 (multi-token) collection: `addBlock` can put two identical transfers of it in one transaction. */
  kip37Collection: string;
}

export interface Simulator {
  /** Base URL of the explorer API (paths under /api/v1). */
  url: string;
  /**
   * JSON-RPC endpoint (the same server, at `rpcPath`): eth_blockNumber, kaia_blockNumber, eth_chainId,
   * eth_getBlockByNumber, eth_getLogs and kaia_getLogs (every record's log, as operation 11 lists it), kaia_getBlockReceipts and debug_traceTransaction (callTracer) of the top-level transactions,
   * eth_getBalance, and eth_call for decimals(), symbol(), name(), balanceOf(address) of the tokens.
   */
  rpcUrl: string;
  head(): number;
  /** Adds `count` blocks (default 1) of generated records. */
  mine(count?: number): void;
  /** Appends one block holding exactly these records (none generated); returns its number. */
  addBlock(records?: ChosenRecords): number;
  /**
   * The chain makes no block for `seconds`: every later block is that much later in block
   * time (a halted chain, where block time and block numbers part ways).
   */
  halt(seconds: number): void;
  setFaults(faults: SimulatorFaults & SimulatorLimits): void;
  stats(): SimulatorStats;
  resetStats(): void;
  truth: SimulatorTruth;
  addresses: SimulatorAddresses;
  close(): Promise<void>;
}

/** What `setFaults` and `close` change while the server runs; the handlers read it at each request. */
export interface LiveSettings {
  faults: SimulatorFaults;
  closing: boolean;
}

const GENESIS_MS = Date.UTC(2025, 0, 1);

function check(condition: boolean, message: string): void {
  if (!condition) throw new KaiawatchError("KW_SIMULATOR_OPTIONS", message);
}

/**
 * A real HTTP server of the explorer API (the eleven operations, with the real service's
 * errors, ordering, limits and defaults) and JSON-RPC head lookups, over a deterministic
 * synthetic chain that grows on a timer or on demand and can be made to misbehave.
 */
export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? 1;
  const startBlock = options.startBlock ?? 100_000_000;
  const initialBlocks = options.initialBlocks ?? 100;
  const blockTime = options.blockTime ?? 0;
  check(Number.isSafeInteger(seed), "seed must be an integer");
  check(Number.isSafeInteger(startBlock) && startBlock >= 0, "startBlock must be a non-negative integer");
  check(Number.isSafeInteger(initialBlocks) && initialBlocks >= 0, "initialBlocks must be a non-negative integer");
  check(Number.isFinite(blockTime) && blockTime >= 0, "blockTime must be 0 (frozen) or a positive number of milliseconds");
  const density: Density = { ...DEFAULT_DENSITY, ...options.density };
  for (const [k, v] of Object.entries(density)) check(Number.isFinite(v) && v >= 0, `density.${k} must be a non-negative number`);
  const now = options.now ?? Date.now;

  const world = createWorld(seed, options.hostile ?? false);
  const chain = new Chain(startBlock);
  const nft = new NftState(world);
  const balances = new Balances(world, chain);
  // Blocks are one second apart but for halts (halt()), which push every later block back.
  let haltedMs = 0;
  const datetimeOf = (n: number) => new Date(GENESIS_MS + (n - startBlock) * 1000 + haltedMs).toISOString();
  const mineOne = () => {
    const n = chain.head + 1;
    const datetime = datetimeOf(n);
    chain.append(datetime, generateBlock(world, nft, createPrng(seed, n), n, datetime, density));
  };
  for (let i = 0; i < initialBlocks; i++) mineOne();

  const limits: SimulatorLimits = {
    apiKey: options.apiKey,
    requestsPerSecond: options.requestsPerSecond,
    dailyCreditQuota: options.dailyCreditQuota,
    indexingLagBlocks: options.indexingLagBlocks,
    plan: options.plan,
    rpcPath: options.rpcPath,
    countCap: options.countCap,
    logResultLimit: options.logResultLimit ?? 10_000,
    logBlockRangeLimit: options.logBlockRangeLimit,
    logTimeoutBlocks: options.logTimeoutBlocks,
    rpcMaxRequestBytes: options.rpcMaxRequestBytes,
  };
  const chosen = options.dialect === "document" ? DOCUMENT_DIALECT : SERVER_DIALECT;
  const dialect: Dialect = { ...chosen, callParties: options.callParties ?? chosen.callParties, inventoryNftType: options.inventoryNftType ?? chosen.inventoryNftType, spelling: options.spelling ?? chosen.spelling };
  const chainId = options.chainId ?? 1001;
  const meter = createMeter(now);
  const pollLog = createPollLog();
  const live: LiveSettings = { faults: { ...options.faults }, closing: false };
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => (pending.delete(entry), resolve()), ms), resolve };
      pending.add(entry);
    });

  const respond = createResponder(meter);
  const { sendError } = respond;

  const handleApi = createApiHandler({ seed, world, chain, nft, dialect, limits, live, meter, pollLog, respond, sleep });
  const handleRpc = createRpcHandler({ world, chain, balances, chainId, limits, live, meter, respond });

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://simulator.invalid");
    const work = req.method === "POST" && url.pathname === (limits.rpcPath ?? "/") ? handleRpc(req, res) : handleApi(req, res, url);
    work.catch(() => {
      // A bug here must still answer, not hang the client.
      if (!res.headersSent) sendError(res, "unknown", SERVER_ERRORS.internal());
      else res.destroy();
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  const timer = blockTime > 0 ? setInterval(mineOne, blockTime) : undefined;
  timer?.unref();

  const truth = createTruth(chain, balances, pollLog);

  return {
    url: base,
    rpcUrl: `${base}${limits.rpcPath ?? ""}`,
    head: () => chain.head,
    mine(count = 1) {
      for (let i = 0; i < count; i++) mineOne();
    },
    addBlock(records = {}) {
      const n = chain.head + 1;
      const datetime = datetimeOf(n);
      return chain.append(datetime, buildChosenBlock(world, nft, createPrng(seed, n, 0xadd), n, datetime, records));
    },
    halt(seconds) {
      check(Number.isSafeInteger(seconds) && seconds >= 0, "halt() takes a whole number of seconds");
      haltedMs += seconds * 1000;
    },
    setFaults(f) {
      const { apiKey, requestsPerSecond, dailyCreditQuota, indexingLagBlocks, plan, rpcPath, logResultLimit, logBlockRangeLimit, logTimeoutBlocks, rpcMaxRequestBytes, ...rest } = f;
      live.faults = { ...live.faults, ...rest };
      if ("apiKey" in f) limits.apiKey = apiKey;
      if ("requestsPerSecond" in f) limits.requestsPerSecond = requestsPerSecond;
      if ("dailyCreditQuota" in f) limits.dailyCreditQuota = dailyCreditQuota;
      if ("indexingLagBlocks" in f) limits.indexingLagBlocks = indexingLagBlocks;
      if ("plan" in f) limits.plan = plan;
      if ("rpcPath" in f) limits.rpcPath = rpcPath;
      if ("logResultLimit" in f) limits.logResultLimit = logResultLimit;
      if ("logBlockRangeLimit" in f) limits.logBlockRangeLimit = logBlockRangeLimit;
      if ("logTimeoutBlocks" in f) limits.logTimeoutBlocks = logTimeoutBlocks;
      if ("rpcMaxRequestBytes" in f) limits.rpcMaxRequestBytes = rpcMaxRequestBytes;
    },
    stats: () => meter.stats(),
    resetStats: () => {
      meter.reset();
      pollLog.reset();
    },
    truth,
    addresses: {
      wallets: [...world.wallets],
      tokens: world.tokens.map((t) => t.address),
      nftCollections: world.collections.map((c) => c.address),
      contracts: [...world.routers, world.proxy, world.implementation, world.factory],
      busyWallet: world.wallets[0] as string,
      busyToken: (world.tokens[0] as (typeof world.tokens)[number]).address,
      busyCollection: (world.collections[0] as (typeof world.collections)[number]).address,
      kip37Collection: (world.collections.find((c) => c.contractType === "KIP37") as (typeof world.collections)[number]).address,
    },
    async close() {
      if (live.closing) return;
      live.closing = true;
      if (timer) clearInterval(timer);
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      pending.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
