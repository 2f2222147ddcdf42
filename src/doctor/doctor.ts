import { lookup } from "node:dns/promises";
import { access, constants } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { Config } from "../config/index.js";
import { createBlockTracesReader } from "../chain/block-traces.js";
import { createJsonRpc, type JsonRpc } from "../chain/json-rpc.js";
import { indexedHead } from "../chain/indexed-head.js";
import { createExplorerClient, type ExplorerClient } from "../explorer/client.js";
import { ExplorerDailyQuotaError, ExplorerHttpError, ExplorerPlanError, ExplorerShapeError } from "../explorer/errors.js";
import { OPERATIONS, type OperationName } from "../explorer/operations.js";
import { servedBlockEnd } from "../explorer/response-checkers.js";
import type { ListResponse } from "../explorer/types.js";
import { FIELD_SPELLINGS, type FieldSpelling } from "../explorer/spelling.js";
import { ENRICHMENT_KINDS } from "../model/enrichment.js";
import { createSink } from "../notify/create-sink.js";
import { sendTestAlert } from "../notify/test-alert.js";
import { explorerOptionsOf } from "../daemon/explorer-options.js";
import { planFromConfig } from "../watch/plan-from-config.js";
import type { PlannedSource } from "../watch/poller.js";
import { rpcOptionsOf } from "../watch/rpc-options.js";
import { isNodeLogOperation, isNodeOperation } from "../watch/source.js";
import { isStoreError } from "../store/errors.js";
import { probeStoreWrites, processUser } from "../store/open-backend.js";
import { storeOptionsOf } from "../config/store-options.js";
import { sinkEndpoint } from "./sink-endpoint.js";

export type Verdict = "ok" | "warn" | "fail";

/** One line of the report: what was checked, how it went, and for a failure what to change. */
export interface DoctorCheck {
  check: string;
  verdict: Verdict;
  detail: string;
  fix?: string;
}

export interface DoctorReport {
  checks: DoctorCheck[];
  /** Credits the explorer charged for the probes (2xx answers), by operation. */
  credits: number;
  creditsByOperation: Partial<Record<OperationName, number>>;
}

export interface DoctorOptions {
  /** Also send a test alert through every sink (what `test-sink` does), instead of only resolving their hosts. */
  send: boolean;
  signal: AbortSignal;
}

/** The chain ids of the networks kaiawatch knows by name. */
const CHAIN_IDS: Readonly<Record<string, number>> = { mainnet: 8217, kairos: 1001 };

/** Blocks a windowed probe covers: enough to see the explorer's indexed head, one record at most. */
const PROBE_BLOCKS = 10;

/**
 * What a user runs first with a real key: the explorer answers and takes the key, which plan
 * the key has, every operation the config uses answers a one-record request whose shape
 * kaiawatch can read, the node is on the configured network and the explorer keeps up with
 * it, and every sink can be reached. Nothing is written; a few credits are spent (reported).
 */
export async function runDoctor(common: Common, config: Config, options: DoctorOptions): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  const plan = planFromConfig(config, { compile: false });
  const client = createExplorerClient(common, { ...explorerOptionsOf(config), maxRetries: 1 });
  const rpc = createJsonRpc(common, { ...rpcOptionsOf(config), maxRetries: 1 });
  checks.push(await checkStore(common, config));
  try {
    const chain = await checkRpc(config, rpc, options.signal);
    const probeHead = chain.head ?? 0;
    checks.push(chain.check);
    if (chain.head !== undefined) checks.push(await checkNodeTraces(common, config, chain.head, options.signal));
    const explorer = await checkExplorer(config, client, indexedHead(probeHead, config.chain.lag_blocks), options.signal);
    checks.push(explorer.check);
    if (chain.head !== undefined) checks.push(await checkLogQuery(rpc, plan.sources, chain.head, options.signal));
    if (explorer.reachable) {
      checks.push(...(await checkPlan(config, client, plan.sources, probeHead, options.signal)));
      const operations = await checkOperations(config, client, plan.sources, probeHead, options.signal);
      checks.push(...operations.checks, answerSpelling(client.fieldSpellings()));
      const perBlock = plan.sources.some((s) => s.definition.operation === "blockInternalTransactions");
      if (chain.head !== undefined) checks.push(indexingLag(config, chain.head, operations.servedEnd, perBlock));
    }
    checks.push(...(await checkSinks(common, config, options)));
  } finally {
    await client.close();
    await rpc.close();
  }
  return { checks, credits: client.meter.spentToday(), creditsByOperation: client.meter.byOperation() };
}

async function checkRpc(config: Config, rpc: ReturnType<typeof createJsonRpc>, signal: AbortSignal): Promise<{ check: DoctorCheck; head: number | undefined }> {
  const check = (verdict: Verdict, detail: string, fix?: string): DoctorCheck => ({ check: "chain rpc", verdict, detail, ...(fix ? { fix } : {}) });
  let chainId: number;
  let head: number;
  try {
    chainId = Number(BigInt(String(await rpc.call("eth_chainId", [], signal))));
    head = Number(BigInt(String(await rpc.call("eth_blockNumber", [], signal))));
  } catch (error) {
    return { check: check("fail", `${rpc.host} does not answer: ${describeError(error)}`, "check chain.rpc_url (the network's public endpoint is the default)"), head: undefined };
  }
  const expected = CHAIN_IDS[config.chain.network];
  if (expected !== undefined && chainId !== expected) {
    return { check: check("fail", `${rpc.host} is chain ${chainId}, but chain.network is ${config.chain.network} (chain ${expected})`, `point chain.rpc_url at a ${config.chain.network} node, or set chain.network to the node's network`), head };
  }
  const network = expected === undefined ? `chain.network ${config.chain.network} has no known chain id: not compared` : `chain ${chainId} is ${config.chain.network}`;
  return { check: check("ok", `${rpc.host}: head ${head}; ${network}`), head };
}

/**
 * Whether the node serves debug_traceBlockByNumber with the call tracer, asked once on the
 * head block (a trace needs the parent's state, which any node keeps for recent blocks).
 * With chain.traces the config counts on it: a node that does not is a failure. Without,
 * it is not one either way: internal transactions stay with the explorer.
 */
async function checkNodeTraces(common: Common, config: Config, head: number, signal: AbortSignal): Promise<DoctorCheck> {
  const check = (verdict: Verdict, detail: string, fix?: string): DoctorCheck => ({ check: "node traces", verdict, detail, ...(fix ? { fix } : {}) });
  // One retry: the probe is a verdict, not a read to carry through (the reader asks with the traces' size cap).
  const rpc: JsonRpc = createJsonRpc(common, { ...rpcOptionsOf(config), maxRetries: 1 });
  const wanted = config.chain.traces;
  try {
    const found = await createBlockTracesReader(common, { rpc }).probe(head, signal);
    if (!found.available) {
      const why = `${rpc.host} does not serve debug_traceBlockByNumber (${found.reason})`;
      if (wanted) return check("fail", `${why}, and chain.traces is true: the watches that read internal transactions from the node get none`, "point chain.rpc_url at a node with the debug API (rpc.api debug), or set chain.traces: false to read internal transactions from the explorer");
      return check("ok", `${why}: internal transactions stay with the explorer`);
    }
    const traced = `${rpc.host} traces blocks with the call tracer (block ${head}: ${found.transactions} transaction${found.transactions === 1 ? "" : "s"}, ${found.calls} call${found.calls === 1 ? "" : "s"})`;
    return check("ok", wanted ? `${traced}: the watches with source node or both read their internal transactions from it, one request a block` : `${traced}: internal transactions can be read from the node, one request a block (chain.traces: true)`);
  } catch (error) {
    const stays = wanted ? "the watches that read internal transactions from the node may fall behind" : "internal transactions stay with the explorer";
    return check("warn", `debug_traceBlockByNumber on block ${head} failed: ${describeError(error)}; ${stays}`, "a trace needs the block's parent state and may be megabytes: run kaiawatch doctor again, and see docs/node-traces.md");
  } finally {
    await rpc.close();
  }
}

/** Blocks the log query probe covers: a few recent ones, so that a public endpoint's limits are not the question. */
const LOG_PROBE_BLOCKS = 5;

/**
 * The node's log query, as the node log sources ask it: one eth_getLogs over a few recent
 * blocks with an address list (the config's, or the zero address when no watch reads the
 * node). Without it `source: node` and `both` cannot work; with it they cost no credits.
 */
async function checkLogQuery(rpc: ReturnType<typeof createJsonRpc>, sources: readonly PlannedSource[], head: number, signal: AbortSignal): Promise<DoctorCheck> {
  const readers = sources.filter((s) => isNodeLogOperation(s.definition.operation));
  const addresses = [...new Set(readers.flatMap((s) => (s.logFilters ?? []).flatMap((f) => f.address ?? [])))].slice(0, 100);
  const fromBlock = Math.max(0, head - LOG_PROBE_BLOCKS + 1);
  const hex = (n: number) => `0x${n.toString(16)}`;
  const watches = new Set(readers.flatMap((s) => (s.members ?? []).map((m) => m.watch))).size;
  const who = readers.length === 0 ? "no watch reads it (source: node or both)" : `${watches} watch${watches === 1 ? " reads" : "es read"} it`;
  try {
    const answer = await rpc.call("eth_getLogs", [{ fromBlock: hex(fromBlock), toBlock: hex(head), address: addresses.length > 0 ? addresses : ["0x0000000000000000000000000000000000000000"] }], signal);
    if (!Array.isArray(answer)) return { check: "node log query", verdict: "fail", detail: `${rpc.host}: eth_getLogs answered ${JSON.stringify(answer)?.slice(0, 80) ?? "nothing"}, not a list of logs`, fix: "point chain.rpc_url at a node that serves eth_getLogs, or keep source: explorer" };
    const asked = Math.max(1, addresses.length);
    return { check: "node log query", verdict: "ok", detail: `${rpc.host}: eth_getLogs over blocks ${fromBlock}–${head} with ${asked} address${asked === 1 ? "" : "es"} answers (${answer.length} log${answer.length === 1 ? "" : "s"}); ${who}` };
  } catch (error) {
    return { check: "node log query", verdict: readers.length === 0 ? "warn" : "fail", detail: `${rpc.host}: eth_getLogs over blocks ${fromBlock}–${head}: ${describeError(error)}; ${who}`, fix: "point chain.rpc_url at a node that serves eth_getLogs (address lists), or keep source: explorer" };
  }
}

/** The explorer answers and takes the key: the cheapest request there is (operation 8, 1 credit). */
async function checkExplorer(config: Config, client: ExplorerClient, block: number, signal: AbortSignal): Promise<{ check: DoctorCheck; reachable: boolean }> {
  const host = new URL(config.explorer.base_url).host;
  const key = config.explorer.api_key === undefined ? "no key configured" : "the key is accepted";
  try {
    await client.blockInternalTransactions({ blockNumber: block, size: 1 }, { signal });
    return { check: { check: "explorer", verdict: "ok", detail: `${host} answers; ${key}` }, reachable: true };
  } catch (error) {
    if (error instanceof ExplorerHttpError && error.status === 401) {
      return { check: { check: "explorer", verdict: "fail", detail: `${host} refuses the key (HTTP 401 ${error.apiCode ?? ""})`.trim(), fix: "check explorer.api_key: a KaiaScan Open API key, sent as Authorization: Bearer" }, reachable: false };
    }
    if (error instanceof ExplorerDailyQuotaError) return { check: { check: "explorer", verdict: "fail", detail: `${host}: ${error.message}`, fix: "wait for the quota to reset, or use a key with a larger plan" }, reachable: false };
    return { check: { check: "explorer", verdict: "fail", detail: `${host}: ${describeError(error)}`, fix: "check explorer.base_url (https://mainnet-oapi.kaiascan.io or https://kairos-oapi.kaiascan.io) and this machine's network" }, reachable: false };
  }
}

/**
 * The key's plan, probed: its quotas where the server says them (the predecessor's
 * /api/v1/app-users/request-quotas, free), and operation 7 (PRO_PLUS) when the config would
 * use it: a refused probe is free, an answered one costs 20 credits.
 */
async function checkPlan(config: Config, client: ExplorerClient, sources: readonly PlannedSource[], head: number, signal: AbortSignal): Promise<DoctorCheck[]> {
  const quotas = await readQuotas(config, signal);
  const users = sources.filter((s) => s.definition.operation === "accountInternalTransactions");
  if (users.length === 0 && config.explorer.api_plan !== "PRO_PLUS") {
    return [{ check: "plan", verdict: "ok", detail: `${quotas}; explorer.api_plan is FREE and no watch reads operation 7 (PRO_PLUS): not probed (a probe costs 20 credits when it answers)` }];
  }
  const address = users[0]?.definition.address ?? "0x0000000000000000000000000000000000000000";
  const block = indexedHead(head, config.chain.lag_blocks);
  try {
    await client.accountInternalTransactions({ accountAddress: address, blockNumberStart: block, blockNumberEnd: block, size: 1 }, { signal });
    return [{ check: "plan", verdict: "ok", detail: `${quotas}; operation 7 answers: the key has PRO_PLUS` }];
  } catch (error) {
    if (!(error instanceof ExplorerPlanError)) return [{ check: "plan", verdict: "fail", detail: `${quotas}; operation 7 (probe): ${describeError(error)}` }];
    const watches = [...new Set(users.map((s) => s.watch))];
    const detail = `${quotas}; the key's plan refuses operation 7 (it needs PRO_PLUS): HTTP 403`;
    if (watches.length === 0) {
      return [{ check: "plan", verdict: "fail", detail: `${detail}, and explorer.api_plan says PRO_PLUS`, fix: "set explorer.api_plan: FREE, or upgrade the key to PRO_PLUS" }];
    }
    return [
      {
        check: "plan",
        verdict: "fail",
        detail: `${detail}; watch${watches.length === 1 ? "" : "es"} ${watches.join(", ")} would read through it`,
        fix: config.explorer.api_plan === "PRO_PLUS" ? "set explorer.api_plan: FREE (the planner then reads internal transactions through operation 8), or upgrade the key to PRO_PLUS" : "remove `via: own` from those watches so the planner can use operation 8, or upgrade the key to PRO_PLUS",
      },
    ];
  }
}

async function readQuotas(config: Config, signal: AbortSignal): Promise<string> {
  const url = new URL(`${config.explorer.base_url.replace(/\/+$/, "")}/api/v1/app-users/request-quotas`);
  try {
    const response = await fetch(url, { headers: { accept: "application/json", ...(config.explorer.api_key ? { authorization: `Bearer ${config.explorer.api_key}` } : {}) }, signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]) });
    if (!response.ok) return "quotas: not said by this server";
    const body = (await response.json()) as { request_per_second?: unknown; request_per_day?: unknown };
    const parts = [typeof body.request_per_second === "number" ? `${body.request_per_second} requests/s` : "", typeof body.request_per_day === "number" ? `${body.request_per_day} a day` : ""].filter(Boolean);
    return parts.length ? `quotas ${parts.join(", ")}` : "quotas: not said by this server";
  } catch {
    return "quotas: not said by this server";
  }
}

/** The operations the config uses: its sources' and its enrichments'. */
function operationsOf(config: Config, sources: readonly PlannedSource[]): Map<OperationName, PlannedSource | undefined> {
  const used = new Map<OperationName, PlannedSource | undefined>();
  for (const source of sources) {
    const operation = source.definition.operation;
    // The node sources read the node: the chain checks (and the log query probe) cover them.
    if (isNodeOperation(operation)) continue;
    if (!used.has(operation)) used.set(operation, source);
  }
  for (const rule of config.rules) for (const kind of rule.enrich) for (const operation of ENRICHMENT_KINDS[kind].operations) if (!used.has(operation)) used.set(operation, undefined);
  return used;
}

/**
 * One request of one record for each operation the config uses, read through the boundary:
 * its shape passes, and the fields the document does not list are named. Windowed requests
 * end at the node's head, so that the served range says how far the explorer has indexed.
 */
async function checkOperations(config: Config, client: ExplorerClient, sources: readonly PlannedSource[], head: number, signal: AbortSignal): Promise<{ checks: DoctorCheck[]; servedEnd: number | undefined }> {
  const checks: DoctorCheck[] = [];
  let servedEnd: number | undefined;
  let transactionHash: string | undefined;
  const window = { blockNumberStart: Math.max(0, head - PROBE_BLOCKS + 1), blockNumberEnd: head, size: 1 };
  for (const [operation, source] of operationsOf(config, sources)) {
    if (operation === "accountInternalTransactions") continue; // the plan check probed it
    const name = `operation ${OPERATIONS[operation].number}`;
    const d = source?.definition;
    let request: (() => Promise<unknown>) | undefined;
    switch (operation) {
      case "accountEventLogs":
        request = () => client.accountEventLogs({ accountAddress: d!.address!, ...(d!.signature ? { signature: d!.signature } : {}), ...window }, { signal });
        break;
      case "accountNftTransfers":
        request = () => client.accountNftTransfers({ accountAddress: d!.address!, ...(d!.contractAddress ? { contractAddress: d!.contractAddress } : {}), ...window }, { signal });
        break;
      case "nftTransfers":
        request = () => client.nftTransfers({ tokenAddress: d!.address!, ...(d!.tokenId ? { tokenId: d!.tokenId } : {}), ...window }, { signal });
        break;
      case "blockInternalTransactions":
        // The explorer check asked it already.
        request = async () => ({});
        break;
      case "transactionInternalTransactions":
      case "transactionEventLogs":
      case "transactionNftTransfers": {
        const hash = transactionHash;
        if (hash !== undefined) request = () => client[operation]({ transactionHash: hash, size: 1 }, { signal });
        break;
      }
      default:
        // Operations 2, 6 and 9 are read whole, never field by field: nothing to check but that they answer, which costs a lookup key the probes rarely have.
        break;
    }
    if (request === undefined) {
      checks.push({ check: name, verdict: "ok", detail: `${operation}: used by enrichments; not probed (it needs a transaction or token the probes did not meet); its answers are passed on whole` });
      continue;
    }
    try {
      const answer = (await request()) as Partial<ListResponse<{ transaction_hash?: unknown }>>;
      if (answer.results !== undefined && answer.paging !== undefined) {
        const end = servedBlockEnd(answer as ListResponse<unknown>);
        if (end !== undefined) servedEnd = Math.min(end, servedEnd ?? end);
        const hash = answer.results[0]?.transaction_hash;
        if (typeof hash === "string") transactionHash ??= hash;
      }
      const drift = Object.keys(client.unknownFields()[operation] ?? {});
      const records = operation === "blockInternalTransactions" ? "answered the explorer check; " : answer.results === undefined ? "" : `${answer.results.length === 0 ? "no record" : "a record"} in the probe; `;
      checks.push({ check: name, verdict: "ok", detail: `${operation}: ${records}shape readable; fields beyond the document: ${drift.length ? drift.join(", ") : "none"}` });
    } catch (error) {
      checks.push(operationFailure(name, error));
    }
  }
  return { checks, servedEnd };
}

/** How the explorer spelled its answers' field names (src/explorer/spelling.ts): both are read alike; said so that the server's choice is seen. */
function answerSpelling(seen: Record<FieldSpelling, number>): DoctorCheck {
  const spoken = FIELD_SPELLINGS.filter((spelling) => seen[spelling] > 0);
  const answers = (spelling: FieldSpelling) => (spoken.length > 1 ? ` (${seen[spelling]} answer${seen[spelling] === 1 ? "" : "s"})` : "");
  const detail = spoken.length === 0 ? "no answer read" : `the explorer answered in ${spoken.map((spelling) => `${spelling}${answers(spelling)}`).join(" and ")}; both spellings are read alike`;
  return { check: "field spelling", verdict: "ok", detail };
}

function operationFailure(name: string, error: unknown): DoctorCheck {
  if (error instanceof ExplorerShapeError) {
    return { check: name, verdict: "fail", detail: `the answer's shape changed at ${error.field}: ${describeError(error)}`, fix: "kaiawatch cannot read this answer: report this line (with kaiawatch's version) so the boundary can learn the new shape" };
  }
  if (error instanceof ExplorerPlanError) return { check: name, verdict: "fail", detail: describeError(error), fix: `the key's plan lacks this operation (it needs ${error.needs})` };
  return { check: name, verdict: "fail", detail: describeError(error) };
}

/**
 * The node's head against the explorer's indexed head (a windowed answer's served range).
 * A windowed source reads the served range and waits for the rest; operation 8 cannot: a
 * block the explorer has not indexed answers an empty list (klaytn/finder-api checks no
 * block there), so with operation 8 a lag above chain.lag_blocks would skip records.
 */
function indexingLag(config: Config, head: number, servedEnd: number | undefined, perBlock: boolean): DoctorCheck {
  if (servedEnd === undefined) return { check: "indexing lag", verdict: "ok", detail: "not measured: the explorer's answers did not state a served range" };
  const lag = Math.max(0, head - servedEnd);
  const detail = `the explorer has indexed to block ${servedEnd}, ${lag} behind the node's head (chain.lag_blocks is ${config.chain.lag_blocks})`;
  if (lag <= config.chain.lag_blocks) return { check: "indexing lag", verdict: "ok", detail };
  if (perBlock) return { check: "indexing lag", verdict: "fail", detail, fix: `operation 8 cannot tell a block not indexed yet from a block without internal transactions: set chain.lag_blocks to ${lag} or more (with a margin)` };
  return { check: "indexing lag", verdict: "warn", detail, fix: `windows past the explorer's head are fetched again until it has them (explorer_behind_head alerts meanwhile): set chain.lag_blocks to ${lag} or more` };
}

/**
 * The file store can be written where the daemon will write it: its folder exists or can be
 * made, a file can be created and written in it, and the store lock can be taken (and is let
 * go at once). A lock held (a running daemon) is a warning. The same error as the daemon's
 * start, in the same words.
 */
async function checkStore(common: Common, config: Config): Promise<DoctorCheck> {
  const path = resolve(config.store.path);
  try {
    const probed = await probeStoreWrites(common, storeOptionsOf(config.store));
    if (probed.kind === "postgres") return { check: "store", verdict: "ok", detail: "PostgreSQL (store.url): not probed here; the daemon connects at start" };
    return { check: "store", verdict: "ok", detail: `${probed.path}: ${processUser()} can write files in its folder and take the store lock` };
  } catch (error) {
    // Most often a daemon running on this store: doctor beside it is no fault of the config.
    if (isStoreError(error, "KW_STORE_LOCKED")) return { check: "store", verdict: "warn", detail: `${path}: ${processUser()} can write files in its folder, but the lock is not free: ${error.message}` };
    return { check: "store", verdict: "fail", detail: describeError(error) };
  }
}

async function checkSinks(common: Common, config: Config, options: DoctorOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const [name, sinkConfig] of Object.entries(config.sinks)) {
    const check = `sink ${name} (${sinkConfig.type})`;
    const endpoint = sinkEndpoint(sinkConfig);
    if (endpoint.kind === "host") {
      try {
        const addresses = await lookup(endpoint.host, { all: true });
        if (!options.send) checks.push({ check, verdict: "ok", detail: `configured; ${endpoint.host} resolves (${addresses.length} address${addresses.length === 1 ? "" : "es"})` });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        checks.push({ check, verdict: "fail", detail: `${endpoint.host} does not resolve (${typeof code === "string" ? code : describeError(error)})`, fix: `check sinks.${name}.${endpoint.key} and this machine's DNS` });
        continue;
      }
    } else if (endpoint.kind === "file") {
      try {
        await access(dirname(endpoint.path), constants.W_OK);
        if (!options.send) checks.push({ check, verdict: "ok", detail: `configured; ${dirname(endpoint.path)} is writable` });
      } catch {
        checks.push({ check, verdict: "fail", detail: `cannot write in ${dirname(endpoint.path)}`, fix: `create the folder, or change sinks.${name}.path` });
        continue;
      }
    } else if (!options.send) checks.push({ check, verdict: "ok", detail: "configured; writes to standard output" });
    if (options.send) {
      const sink = createSink(common, name, sinkConfig);
      try {
        const result = await sendTestAlert(common, sink, config.chain.network, options.signal);
        checks.push({ check, verdict: result.accepted ? "ok" : "fail", detail: result.report.replace(`sink ${name} (${sinkConfig.type}): `, ""), ...(result.accepted ? {} : { fix: `kaiawatch test-sink ${name} tells the same; check the sink's settings` }) });
      } finally {
        await sink.close?.().catch(() => undefined);
      }
    }
  }
  return checks;
}
