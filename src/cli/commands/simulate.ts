import { once } from "node:events";
import { parseArgs } from "node:util";
import { describeError } from "../../common/errors.js";
import { DEFAULT_DENSITY } from "../../simulator/generate.js";
import { createSimulator, type Density, type SimulatorOptions } from "../../simulator/index.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, UsageError, type Command, type CommandIO } from "../command.js";

const HELP = `Usage: kaiawatch simulate [options]

Serve the explorer API (all eleven operations under /api/v1, with the real service's
answer shapes, errors, ordering, limits and defaults) and JSON-RPC (eth_blockNumber, eth_getBalance,
eth_call for token decimals/symbol/balanceOf; balances follow the records; eth_getBlockByNumber
for block times; kaia_getBlockReceipts and debug_traceTransaction for the top-level transactions) over
a synthetic Kaia chain: wallets, fungible tokens, NFT collections, contract calls with
internal call trees, some reverting. The same seed gives the same chain. Point kaiawatch
at it (explorer.base_url and chain.rpc_url) to try rules without an API key or credits.

Options:
  --port N             port to listen on (default 8545; 0 = any free port)
  --host HOST          address to listen on (default 127.0.0.1)
  --seed N             seed of the chain and of the faults (default 1)
  --block-time T       time between new blocks: milliseconds or with a unit, e.g. 500ms,
                       1s, 2m (default 1s; 0 = frozen)
  --start-block N      number of the first block (default 100000000)
  --initial-blocks N   blocks generated before serving (default 100)
  --density LIST       records per block on average, as NAME=N pairs separated by
                       commas; NAME is eventLogs, nftTransfers or internalTransactions
                       (default eventLogs=8,nftTransfers=4,internalTransactions=12;
                       a name left out keeps its default)
  --hostile            names, NFT metadata and revert messages full of chat mentions,
                       HTML, CR/LF, bidi and zero-width characters, 100 KB strings
  --dialect NAME       server (default): answer as the real server does (klaytn/finder-api:
                       property holds the served block range, a range past the indexer
                       is clamped to it, amounts as strings, operation 1's from/to as
                       addresses, operation 9's nft_type beside nft); document: as
                       explorer-api.md reads (property {}, amounts as JSON numbers,
                       from/to as account summaries, nft_type inside nft)
  --api-key KEY        require "Authorization: Bearer KEY" (401 otherwise)
  --plan PLAN          the key's plan: PRO_PLUS (default, every operation) or FREE
                       (operation 7 answers 403 FORBIDDEN)
  --rps N              requests per second before 429 (type:requestPerSecond)
  --daily-quota N      credits per UTC day (charged at the spec's costs, 2xx only)
                       before 429 (type:requestPerDay)
  --lag N              the API serves only blocks <= head - N; JSON-RPC reports the head
  --chain-id N         what eth_chainId answers (default 1001, Kairos; 8217 is mainnet)
  --error-rate R       fraction (0..1) of answers that are 500, 502 or 503
  --latency T          delay added to every answer (milliseconds or with a unit)
  --truncate-rate R    fraction (0..1) of 200 answers whose JSON is cut short
  --malformed-rate R   fraction (0..1) of 200 answers that are not JSON or of the wrong shape
  --reset-rate R       fraction (0..1) of requests whose connection is dropped
  --short-page-rate R  fraction (0..1) of list answers missing one record that their
                       paging.total_count still counts (a block not fully indexed yet)
  --help               show this text

Faults are drawn from the seed: the same requests meet the same faults. Stop with Ctrl-C.
`;

const OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  seed: { type: "string" },
  "block-time": { type: "string" },
  "start-block": { type: "string" },
  "initial-blocks": { type: "string" },
  density: { type: "string" },
  hostile: { type: "boolean" },
  dialect: { type: "string" },
  plan: { type: "string" },
  "chain-id": { type: "string" },
  "api-key": { type: "string" },
  rps: { type: "string" },
  "daily-quota": { type: "string" },
  lag: { type: "string" },
  "error-rate": { type: "string" },
  latency: { type: "string" },
  "truncate-rate": { type: "string" },
  "malformed-rate": { type: "string" },
  "reset-rate": { type: "string" },
  "short-page-rate": { type: "string" },
} as const;

function integer(name: string, text: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^-?[0-9]+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not "${text}"`);
  return value;
}

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !(value > 0)) throw new UsageError(`--${name} must be a positive number, not "${text}"`);
  return value;
}

function rate(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^[0-9]*\.?[0-9]+$/.test(text) || value < 0 || value > 1) throw new UsageError(`--${name} must be a fraction from 0 to 1, not "${text}"`);
  return value;
}

const DENSITY_NAMES = Object.keys(DEFAULT_DENSITY) as (keyof Density)[];
/** Beyond this a block takes long to generate, and the chain no longer looks like Kaia. */
const MAX_DENSITY = 10_000;

/** Records per block from "eventLogs=8,nftTransfers=4,internalTransactions=12" (any subset). */
function parseDensity(text: string | undefined): Partial<Density> | undefined {
  if (text === undefined) return undefined;
  const density: Partial<Density> = {};
  for (const pair of text.split(",")) {
    const m = /^\s*([A-Za-z]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*$/.exec(pair);
    const name = m?.[1] as keyof Density | undefined;
    const value = Number(m?.[2]);
    if (!m || name === undefined || !DENSITY_NAMES.includes(name) || !(value <= MAX_DENSITY)) {
      throw new UsageError(`--density must be NAME=N pairs separated by commas, NAME one of ${DENSITY_NAMES.join(", ")} and N from 0 to ${MAX_DENSITY} (e.g. eventLogs=8,nftTransfers=4), not "${text}"`);
    }
    density[name] = value;
  }
  return density;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** Milliseconds from "250", "250ms", "1.5s" or "2m". */
export function parseDuration(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new UsageError(`--${name} must be a duration such as 500ms, 1s or 2m, not "${text}"`);
  return Math.round(Number(m[1]) * (UNITS[m[2] ?? "ms"] ?? 1));
}

function optionsFrom(values: Record<string, string | boolean | undefined>): SimulatorOptions & { port: number } {
  const str = (k: keyof typeof OPTIONS) => (typeof values[k] === "string" ? (values[k] as string) : undefined);
  const faults = {
    serverErrorRate: rate("error-rate", str("error-rate")),
    latencyMs: parseDuration("latency", str("latency")),
    truncateRate: rate("truncate-rate", str("truncate-rate")),
    malformedRate: rate("malformed-rate", str("malformed-rate")),
    resetRate: rate("reset-rate", str("reset-rate")),
    shortPageRate: rate("short-page-rate", str("short-page-rate")),
  };
  const dialect = str("dialect");
  if (dialect !== undefined && dialect !== "server" && dialect !== "document") throw new UsageError(`--dialect must be server or document, not "${dialect}"`);
  const plan = str("plan");
  if (plan !== undefined && plan !== "FREE" && plan !== "PRO_PLUS") throw new UsageError(`--plan must be FREE or PRO_PLUS, not "${plan}"`);
  const apiKey = str("api-key");
  if (apiKey !== undefined && apiKey.trim() === "") throw new UsageError("--api-key must not be empty");
  return {
    port: integer("port", str("port"), 0, 65535) ?? 8545,
    host: str("host") ?? "127.0.0.1",
    seed: integer("seed", str("seed"), -(2 ** 31), 2 ** 32) ?? 1,
    blockTime: parseDuration("block-time", str("block-time")) ?? 1000,
    startBlock: integer("start-block", str("start-block"), 0),
    initialBlocks: integer("initial-blocks", str("initial-blocks"), 0, 1_000_000),
    density: parseDensity(str("density")),
    hostile: values.hostile === true,
    apiKey,
    dialect,
    plan,
    chainId: integer("chain-id", str("chain-id"), 1),
    requestsPerSecond: positive("rps", str("rps")),
    dailyCreditQuota: integer("daily-quota", str("daily-quota"), 0),
    indexingLagBlocks: integer("lag", str("lag"), 0),
    faults: Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined)),
  };
}

function describeDensity(density: Partial<Density> | undefined): string {
  const d = { ...DEFAULT_DENSITY, ...density };
  return `${d.eventLogs} event logs, ${d.nftTransfers} NFT transfers, ${d.internalTransactions} internal transactions`;
}

function describeFaults(o: SimulatorOptions): string {
  const f = o.faults ?? {};
  const parts = [
    o.requestsPerSecond !== undefined ? `${o.requestsPerSecond} requests/s` : "",
    o.dailyCreditQuota !== undefined ? `${o.dailyCreditQuota} credits/day` : "",
    o.indexingLagBlocks ? `indexer ${o.indexingLagBlocks} blocks behind` : "",
    f.serverErrorRate ? `${f.serverErrorRate} server errors` : "",
    f.latencyMs ? `${f.latencyMs} ms latency` : "",
    f.truncateRate ? `${f.truncateRate} truncated` : "",
    f.malformedRate ? `${f.malformedRate} malformed` : "",
    f.resetRate ? `${f.resetRate} resets` : "",
    f.shortPageRate ? `${f.shortPageRate} short pages` : "",
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "none";
}

/** What eth_chainId answers, by the name chain.network gives it (doctor compares the two). */
const NETWORKS: Readonly<Record<number, string>> = { 1001: "kairos", 8217: "mainnet" };

/** A whole config for this simulator: one watch, one rule, a console sink. */
function configHint(url: string, rpcUrl: string, wallet: string, options: SimulatorOptions): string[] {
  const network = NETWORKS[options.chainId ?? 1001] ?? "simulated";
  const key = options.apiKey === undefined ? "" : ', api_key: "${KAIASCAN_API_KEY}"';
  // doctor warns when the explorer is further behind the head than chain.lag_blocks (default 2).
  const lag = (options.indexingLagBlocks ?? 0) > 2 ? `, lag_blocks: ${options.indexingLagBlocks}` : "";
  // At the left margin, as it goes into the file.
  return [
    `explorer: { base_url: "${url}"${key} }`,
    `chain: { network: ${network}, rpc_url: "${rpcUrl}", explorer_url: "${url}"${lag} }`,
    "watches:",
    `  - { name: busy-wallet, account: "${wallet}", sources: [nft_transfers] }`,
    "rules:",
    "  - { name: busy-wallet-nfts, watch: busy-wallet, notify: [console] }",
    "sinks:",
    "  console: { type: console }",
    ...(options.apiKey === undefined ? [] : ["  (set KAIASCAN_API_KEY to the --api-key value)"]),
  ];
}

export const simulateCommand: Command = {
  help: HELP,
  async run(args: string[], io: CommandIO): Promise<number> {
    let options: SimulatorOptions & { port: number };
    try {
      const { values } = parseArgs({ args, options: OPTIONS, allowPositionals: false, strict: true });
      options = optionsFrom(values);
    } catch (error) {
      const message = error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ? (error as Error).message : describeError(error);
      io.stderr.write(`kaiawatch simulate: ${message}\nRun \`kaiawatch simulate --help\` for the options.\n`);
      return EXIT_USAGE;
    }
    if (io.signal.aborted) return EXIT_OK;
    let sim;
    try {
      sim = await createSimulator(options);
    } catch (error) {
      const code = (error as { code?: string }).code;
      const reason = code === "EADDRINUSE" ? `port ${options.port} on ${options.host} is already in use (try --port 0)` : code === "EACCES" ? `no permission to listen on port ${options.port}` : describeError(error);
      io.stderr.write(`kaiawatch simulate: cannot start: ${reason}\n`);
      return EXIT_RUNTIME;
    }
    const a = sim.addresses;
    io.stdout.write(
      [
        `kaiawatch simulate: a synthetic Kaia chain from seed ${options.seed}`,
        `  explorer API  ${sim.url}  (paths under /api/v1)`,
        `  JSON-RPC      ${sim.rpcUrl}  (POST eth_blockNumber, eth_getBalance, eth_call: decimals/symbol/balanceOf, eth_getBlockByNumber, kaia_getBlockReceipts, debug_traceTransaction, debug_traceBlockByNumber)`,
        `  head          ${sim.head()}, ${options.blockTime ? `a new block every ${options.blockTime} ms` : "frozen"}`,
        `  density       ${describeDensity(options.density)} per block on average`,
        `  answers       ${options.dialect ?? "server"} dialect`,
        `  auth          ${options.apiKey ? `bearer token required (--api-key), plan ${options.plan ?? "PRO_PLUS"}` : "none"}`,
        `  faults        ${describeFaults(options)}${options.hostile ? "; hostile content on" : ""}`,
        "",
        "Addresses with activity to watch:",
        `  busy wallet      ${a.busyWallet}  (account: nft_transfers, internal_transactions, transactions)`,
        `  second wallet    ${a.wallets[1]}`,
        `  busy token       ${a.busyToken}  (contract: event logs, Transfer and Approval)`,
        `  busy collection  ${a.busyCollection}  (collection: NFT transfers)`,
        `  multi-token NFT  ${a.nftCollections[2]}  (KIP37)`,
        `  router contract  ${a.contracts[0]}  (contract: internal calls, some reverting)`,
        "",
        "A config.yaml for it, which `kaiawatch doctor` passes as it stands:",
        ...configHint(sim.url, sim.rpcUrl, a.busyWallet, options),
        "  (explorer_url: alert links to /tx/… and /block/… open the simulator's own pages, not kaiascan.io)",
        "",
        "Stop with Ctrl-C.",
        "",
      ].join("\n"),
    );
    if (!io.signal.aborted) await once(io.signal, "abort");
    const stats = sim.stats();
    await sim.close();
    const requests = Object.values(stats.requests).reduce((n, byStatus) => n + Object.values(byStatus).reduce((m, k) => m + k, 0), 0);
    io.stdout.write(`kaiawatch simulate: stopped at block ${sim.head()} after ${requests} requests (${stats.creditsTotal} credits charged)\n`);
    return EXIT_OK;
  },
};
