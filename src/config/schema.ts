import { z } from "zod";
import { hasValidChecksum } from "../chain/address.js";
import { baseUrl, duration, httpUrl, optionalSecret, unlessMissing } from "../common/value-schemas.js";
import { sinkConfigSchema } from "../notify/sinks/index.js";
import { eventSignatureProblem } from "./event-signature.js";
import { scheduleProblem } from "./schedule.js";
import { ALERT_SEVERITIES } from "../model/alert-document.js";
import { ENRICHMENTS } from "../model/enrichment.js";
import { RECORD_FAMILIES } from "../model/record.js";
import { accountSources } from "../families/registry.js";
import type { AccountSource } from "./types.js";
import { methodSpec } from "../chain/method-abi.js";
import { BALANCE_ALERT_SOURCE } from "../model/alert-document.js";
import type { StartPosition } from "../model/start-position.js";
import type { Condition } from "./types.js";
import { labelNameProblem, labelValueProblem, LABEL_NAME_PATTERN } from "../notify/labels.js";
import { parseMatchers } from "../notify/matchers.js";
import { GROUP_BY_ALL, type RouteSpec } from "../notify/routes.js";
import type { InhibitRuleSpec } from "../notify/inhibit.js";
import {
  parseDayOfMonthRange,
  parseLocation,
  parseMonthRange,
  parseTimeRange,
  parseWeekdayRange,
  parseYearRange,
  type NamedTimeIntervalSpec,
  type TimeIntervalSpec,
} from "../notify/time-intervals.js";

/*
 * The zod schema of config.yaml. It validates each key and applies defaults; what needs
 * several sections at once (a rule's watch, defaults inherited by watches, the network's
 * URLs) is resolved in resolve-config.ts. The JSON Schema for editors is generated from
 * this file, so the two never disagree.
 */

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

const slug = (what: string) =>
  z.string().regex(SLUG_PATTERN, `${what} must be lowercase letters, digits, "-" or "_", starting with a letter or digit`);

// The same EIP-55 check as addresses in rule conditions (src/rules/operand.ts): a mixed-case
// address whose case is wrong is almost always a typo, and a watch on it would never match.
const address = z
  .string({ error: unlessMissing("not an address (0x followed by 40 hex digits)") })
  .regex(ADDRESS_PATTERN, "not an address (0x followed by 40 hex digits)")
  .refine((value) => !ADDRESS_PATTERN.test(value) || hasValidChecksum(value), "has mixed letter case that fails its EIP-55 checksum: probably a typo (write it all lowercase to skip the check)");

/** A deadline of zero would fail everything at once. */
const positiveDuration = duration.refine((ms) => ms > 0, "must be longer than 0");

/**
 * A bearer token an attacker on the network cannot guess, and that survives a header
 * intact: a space would be cut by the `Bearer <token>` parser, so it could never match.
 */
const STATUS_TOKEN_MIN = 16;
const statusToken = z
  .string()
  .transform((text) => (text === "" ? undefined : text))
  .refine((token) => token === undefined || !/\s/.test(token), "a token cannot contain spaces or other whitespace")
  .refine((token) => token === undefined || token.length >= STATUS_TOKEN_MIN, `too short: at least ${STATUS_TOKEN_MIN} characters (e.g. the output of \`openssl rand -hex 32\`)`)
  .optional();

const text = z.string();
const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, "not a field name");

/** Each item once; a Set, not indexOf per item: an accounts watch may list 100,000 addresses. */
function uniqueItems<T>(list: T[], ctx: z.RefinementCtx) {
  const seen = new Set<T>();
  list.forEach((item, index) => {
    if (seen.has(item)) ctx.addIssue({ code: "custom", path: [index], message: `${JSON.stringify(item)} is listed twice` });
    else seen.add(item);
  });
}

const schedule = z
  .string()
  .superRefine((pattern, ctx) => {
    const problem = scheduleProblem(pattern);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  })
  .meta({ description: 'A croner pattern with a seconds field, e.g. "*/10 * * * * *" (every 10 seconds), or "head": tick when the chain head passes the source\'s cursor (read every chain.head_interval over JSON-RPC), the lowest latency, at most one tick a block.' });

const START_MESSAGE = 'expected "latest", a block number, or "-N" (N blocks before the head)';
const start = z
  .union([z.literal("latest"), z.int(), z.string().regex(/^-[1-9][0-9]*$/, START_MESSAGE)], { error: START_MESSAGE })
  .meta({ description: 'Where a new source begins: "latest", a block number, or "-N" (N blocks before the head).' })
  .transform((value): StartPosition => {
    if (value === "latest") return { kind: "latest" };
    const n = Number(value);
    return n < 0 ? { kind: "relative", blocks: -n } : { kind: "block", block: n };
  });

const maxWindowBlocks = z.int().min(1).max(1000);

const LISTEN_PATTERN = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;
const LISTEN_MESSAGE = 'expected "host:port" (e.g. "127.0.0.1:9464"), or false to disable';
const listen = z
  .union([z.literal(false), z.string().regex(LISTEN_PATTERN, LISTEN_MESSAGE)], { error: LISTEN_MESSAGE })
  .transform((value, ctx) => {
    if (value === false) return false;
    const match = LISTEN_PATTERN.exec(value);
    const port = Number(match?.[2]);
    if (port > 65535) {
      ctx.addIssue({ code: "custom", message: "port must be 0..65535" });
      return z.NEVER;
    }
    return { host: (match?.[1] ?? "").replace(/^\[(.*)\]$/, "$1"), port };
  });

// ---- sections ----

export const explorerSchema = z
  .strictObject({
    base_url: baseUrl.optional().meta({ description: "Explorer API base URL. Default: the network's KaiaScan Open API (mainnet-oapi / kairos-oapi)." }),
    api_key: optionalSecret.meta({ description: "KaiaScan API key, sent as a Bearer token. Secret." }),
    requests_per_second: z.number().positive().default(5),
    daily_credit_budget: z.int().positive().optional().meta({ description: "Stop polling before this many credits are spent in a UTC day." }),
    max_retries: z.int().min(0).default(5),
    timeout: duration.prefault("30s").meta({ description: "Longest silence while connecting, waiting for the headers, or between two bytes of the body. A server that keeps sending slowly is bounded by request_deadline." }),
    request_deadline: positiveDuration.prefault("60s").meta({ description: "Longest one request may take, from connecting to the last byte of the body; past it the request fails (KW_EXPLORER_DEADLINE) and is retried." }),
    page_size: z.int().min(1).max(2000).default(2000),
    api_plan: z.enum(["FREE", "PRO_PLUS"]).default("FREE").meta({ description: "The KaiaScan API plan of the key: the planner uses operation 7 (internal transactions per account) only on PRO_PLUS." }),
  })
  .prefault({});

export const chainSchema = z
  .strictObject({
    network: slug("a network name").default("mainnet"),
    rpc_url: httpUrl.optional().meta({ description: "JSON-RPC endpoint for eth_blockNumber. Default: the network's public endpoint." }),
    lag_blocks: z.int().min(0).default(2),
    explorer_url: baseUrl.optional().meta({ description: "Block explorer for links in messages. Default: the network's KaiaScan." }),
    request_deadline: positiveDuration.prefault("30s").meta({ description: "Longest one eth_blockNumber request may take, to the last byte of the answer; then it is retried." }),
    head_interval: positiveDuration.prefault("200ms").meta({ description: 'How often the head is read (eth_blockNumber, no explorer credits) for the sources with schedule "head". Default 200ms: 5 of chain.requests_per_second.' }),
    requests_per_second: z
      .number()
      .positive()
      .default(10)
      .meta({ description: "JSON-RPC requests a second to rpc_url, all together: the head, token decimals and symbols, balances, block times of absence rules. Public endpoints throttle. Default 10." }),
    max_request_bytes: z
      .int()
      .min(4096)
      .default(524_288)
      .meta({ description: "Largest JSON-RPC request sent to rpc_url: a log query (source: node or both) with more addresses or topics than fit is sent as several. Default 524288, a Kaia node's --maxRequestContentLength (512 KiB, about 11,000 addresses or 7,500 topics a query); a node with a smaller limit answers 413 and the reader learns it." }),
    traces: z
      .boolean()
      .default(false)
      .meta({ description: "rpc_url serves debug_traceBlockByNumber with the call tracer (kaiawatch doctor says whether it does; public endpoints do not): watches read from the node (source: node or both) read their internal transactions from it too, one trace a block for all of them, and every_block watches take source. Default false: internal transactions come from the explorer." }),
  })
  .prefault({});

/** The store file when neither `store.path` nor `store.url` is given. */
export const DEFAULT_STORE_PATH = "./data/kaiawatch.db";
/** The default before: the store was a JSON file once, and kept the name after it became SQLite. Renamed at the first start. */
export const LEGACY_DEFAULT_STORE_PATH = "./data/kaiawatch.json";
/** The write API's token file, beside the store unless status.write_token_file says otherwise. */
export const WRITE_TOKEN_FILE_NAME = "status-write-token";

const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\/\S+$/, "must be a postgres:// or postgresql:// URL")
  .meta({ description: "A PostgreSQL store shared by replicas (a secret: it may hold a password; write `${KW_STORE_URL}`). Excludes `path`." });

export const storeSchema = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .optional()
      .meta({ description: `The store: an SQLite database. Default ${DEFAULT_STORE_PATH}; excludes \`url\`.` }),
    url: postgresUrl.optional(),
    lease: positiveDuration
      .prefault("10s")
      .meta({ description: "With `url`: how long a replica holds a source or a sink without renewing (it renews every third of it). A dead replica's work is taken over after this long." }),
    replica_id: slug("a replica id")
      .optional()
      .meta({ description: "With `url`: this replica's name in /status, logs and metrics. Default: host name, process id and a random suffix." }),
    statement_timeout: positiveDuration
      .prefault("10s")
      .meta({ description: "With `url`: the longest one statement may run (PostgreSQL's statement_timeout for kaiawatch's sessions); past it the statement is cancelled, the write fails and is retried, a read says the store is not answering (KW_STORE_TIMEOUT)." }),
    lock_timeout: positiveDuration
      .prefault("3s")
      .meta({ description: "With `url`: the longest one statement waits for a lock another session holds (PostgreSQL's lock_timeout); then it fails as statement_timeout does. Keep it well under `lease`." }),
    pool_timeout: positiveDuration
      .prefault("5s")
      .meta({ description: "With `url`: the longest a query waits for a connection (a free one of the pool of 10, or a new one to connect); then it fails as statement_timeout does." }),
    retention: duration
      .prefault("7d")
      .meta({ description: "How long delivered alerts stay in the store: `kaiawatch outbox` and the status page show them, and a re-scan does not queue them again." }),
  })
  .refine((store) => store.path === undefined || store.url === undefined, { message: "give either path (a file store) or url (PostgreSQL), not both", path: ["url"] })
  .prefault({});

export const statusSchema = z
  .strictObject({
    listen: listen.prefault("127.0.0.1:9464"),
    token: statusToken.meta({ description: "When set, /status and /metrics need `Authorization: Bearer <token>`, and dead letters can be re-queued from the page with it. At least 16 characters, no spaces. Secret." }),
    allowed_hosts: z
      .array(z.string().regex(/^[A-Za-z0-9.-]+$/, "expected a host name (no port, no scheme)"))
      .default([])
      .meta({ description: "Host names the status server answers to, besides localhost, IP addresses and the listen host (e.g. the name Prometheus or a reverse proxy uses). Others get 421: this defeats DNS rebinding." }),
    write_token_file: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Without `token`: the file holding the bearer token the write API (cursor moves, silences, alerts, re-queues) needs. The daemon creates it at its first start, readable by its user only (0600); kaiawatch commands read it. Not made with `store.url`. Default: status-write-token beside the store (store.path's folder)." }),
    frozen_after: positiveDuration
      .prefault("30s")
      .meta({ description: "When kaiawatch's main thread has been held this long (a store write on a frozen disk: SQLite writes hold it), /healthz and /readyz answer 503 saying so, from a thread of their own, instead of not answering at all. Default 30s." }),
    trust_loopback: z
      .boolean()
      .default(false)
      .meta({ description: "true: processes on this machine (a loopback peer) may use the write API without a token, and no token file is made. Only for a machine whose every local user and process is trusted. Default false." }),
  })
  .prefault({});

/** Thresholds of kaiawatch's alerts about itself and of /readyz (docs/operations.md, "Operational alerts"). */
export const operationalSchema = z
  .strictObject({
    check_interval: positiveDuration.prefault("5s").meta({ description: "How often the conditions below are checked." }),
    source_failing_after: positiveDuration.prefault("2m").meta({ description: "A source whose ticks have failed this long (no success between) is failing: an alert, and /readyz 503." }),
    source_behind_blocks: z.int().positive().default(1000).meta({ description: "A source more than this many blocks behind the head is catching up: an alert while it lasts." }),
    sink_pending_age: positiveDuration.prefault("10m").meta({ description: "A sink whose oldest pending alert is older than this is stalled: an alert, and /readyz 503." }),
    sink_backlog_window: positiveDuration.prefault("2m").meta({ description: "A sink whose pending count is sink_backlog_growth or more higher than this long ago has a growing backlog: an alert, until the count is no higher than this long ago." }),
    sink_backlog_growth: z.int().positive().default(50).meta({ description: "How many more pending alerts than sink_backlog_window ago make a sink's backlog growing." }),
    head_stuck_after: positiveDuration.prefault("2m").meta({ description: "A chain head that has not moved for this long is stuck: an alert, and /readyz 503." }),
    repeat_interval: positiveDuration.optional().meta({ description: "A condition still holding is alerted again every this long (a reminder under the episode's id, with a repeat counter) until it clears. Absent: once when it starts, once when it clears." }),
  })
  .prefault({});

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export const logSchema = z
  .strictObject({
    level: z.enum(LOG_LEVELS).default("info"),
    format: z.enum(["json", "pretty"]).default("json"),
  })
  .prefault({});

/** Where the log families (event logs, NFT transfers, token transfers) of a watch are read. */
export const LOG_SOURCES = ["explorer", "node", "both"] as const;
const LOG_SOURCE_DESCRIPTION =
  "Where the event logs, NFT transfers and token transfers of contract, collection and account watches are read (with chain.traces, the internal transactions of account and every_block watches too): explorer (KaiaScan, credits; the default), node (eth_getLogs at chain.rpc_url, one query a window for every such watch together; debug_traceBlockByNumber, one a block; no credits), or both (an alert as soon as either shows the record, once; either carries the watch while the other fails).";

export const defaultsSchema = z
  .strictObject({
    schedule: schedule.default("*/10 * * * * *"),
    start: start.prefault("latest"),
    max_window_blocks: maxWindowBlocks.default(1000),
    jitter: duration.prefault("1s"),
    tick_timeout: positiveDuration.prefault("10m").meta({ description: "Longest one tick of a source (its windows fetched, evaluated and committed) may run; past it the tick is aborted, logged and counted as failed. Windows committed before stay committed." }),
    source: z.enum(LOG_SOURCES).default("explorer").meta({ description: LOG_SOURCE_DESCRIPTION }),
  })
  .prefault({});

// ---- watches ----

export const WATCH_KINDS = ["account", "accounts", "collection", "contract", "contracts", "every_block", "balance"] as const;
/** The families an account watch may list in `sources`: those whose definition says so (src/families/, `watchedBy.account`). */
export const ACCOUNT_SOURCES = accountSources() as [AccountSource, ...AccountSource[]];

const eventFilter = z.string().superRefine((value, ctx) => {
  const problem = eventSignatureProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

/** A function signature a user writes (names allowed): its selector names and decodes the calls of an account watch's transactions. */
const methodSignature = z.string().superRefine((value, ctx) => {
  if (!/\(.*\)\s*$/s.test(value)) {
    ctx.addIssue({ code: "custom", message: 'not a function signature: write name(type name, …), e.g. "withdraw(uint256 amount)"; in a [ ] list, quote each signature' });
    return;
  }
  try {
    methodSpec(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `not a function signature: ${error instanceof Error ? error.message : String(error)}` });
  }
});

const TOKEN_ID_MESSAGE = 'not a token id: write a decimal number, quoted when large ("123")';
const tokenId = z
  .union([z.string().regex(/^[0-9]+$/, TOKEN_ID_MESSAGE), z.int().min(0, TOKEN_ID_MESSAGE)], { error: TOKEN_ID_MESSAGE })
  .transform((value, ctx) => {
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      ctx.addIssue({ code: "custom", message: 'token id too large for a YAML number: quote it ("…")' });
      return z.NEVER;
    }
    return String(value);
  });

/**
 * One flat object: which of account/collection/contract/every_block is set (exactly one)
 * is checked on the raw data in resolve-config.ts, so that it is reported even when
 * another key of the same watch is wrong.
 */
export const watchSchema = z.strictObject({
  name: slug("a watch name"),
  account: address.optional().meta({ description: "Account watch: NFT transfers (op 3), internal transactions (op 7) and/or top-level transactions (from the node) of this address." }),
  sources: z.array(z.enum(ACCOUNT_SOURCES)).min(1).superRefine(uniqueItems).optional().meta({ description: "Account watch only: nft_transfers, internal_transactions (explorer; with chain.traces as source says), transactions (the node's top-level transactions from, to or paid by the account; one block read per block for every account watch, at chain.rpc_url). Default: [nft_transfers], or none when `tokens` is given." }),
  methods: z
    .array(methodSignature)
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: 'Account watch only: function signatures ("withdraw(uint256 amount)") whose calls the `transactions` source names (`method`) and decodes (`args.NAME`; names from the signature, else arg0, arg1, …).' }),
  nft_contract: address.optional().meta({ description: "Account watch only: NFT transfers of this token contract only." }),
  tokens: z
    .array(address)
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: "Account watch: KIP-7 token contracts whose Transfer logs from or to the account are watched (op 11 with the Transfer signature; rules read them as source event_logs). Decimals and symbol are read by JSON-RPC at start-up. Balance watch: the KIP-7 balances read besides KAIA." }),
  collection: address.optional().meta({ description: "Collection watch: NFT transfers of this token contract (op 4)." }),
  token_id: tokenId.optional().meta({ description: "Collection watch only: transfers of this token id only." }),
  contract: address.optional().meta({ description: "Contract watch: event logs emitted by this contract (op 11)." }),
  contracts: z
    .array(address)
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: "Contract list watch: event logs emitted by any of these contracts, read from the node only (source: node, one eth_getLogs a window for all of them; docs/node-logs.md). Takes events as a contract watch does." }),
  accounts: z
    .array(address)
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: "Account list watch: token transfers (tokens) and NFT transfers (sources: [nft_transfers]) from or to any of these accounts, read from the node only (source: node). direction and the alert's account are relative to the listed accounts." }),
  events: z.array(eventFilter).min(1).superRefine(uniqueItems).optional().meta({ description: 'Contract watch only: event signatures ("Transfer(address,address,uint256)", or with indexed and names: "Transfer(address indexed from, address indexed to, uint256 value)") or 0x topic hashes; topic0 is hashed from the canonical form. From the explorer each is its own filtered source; from the node all are one topic0 list. Default: every event.' }),
  balance: z
    .array(address)
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: "Balance watch: the KAIA balance (eth_getBalance) of these addresses, and their balance of each of `tokens` (balanceOf), read at the head by JSON-RPC on the watch's schedule." }),
  every_block: z.literal(true, { error: unlessMissing("every_block can only be true (remove it otherwise)") }).optional().meta({ description: "Internal transactions of every block (op 8, 1 credit a block)." }),
  schedule: schedule.optional(),
  start: start.optional(),
  max_window_blocks: maxWindowBlocks.optional(),
  jitter: duration.optional(),
  source: z.enum(LOG_SOURCES).optional().meta({ description: `Contract, collection and account watches (every_block too with chain.traces): ${LOG_SOURCE_DESCRIPTION} Default: defaults.source.` }),
  via: z.enum(["auto", "own", "shared"]).optional().meta({ description: "Which sources serve this watch. auto (default): the cheapest the planner finds. own: its own sources, one per server-side filter (operation 7 for internal transactions). shared: a source shared with other watches when one sees its records (operation 8 for internal transactions)." }),
});

// ---- rules ----


const conditionScalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const conditionOperand = z.union([conditionScalar, z.array(conditionScalar)]);
const fieldTest = z.union([conditionOperand, z.record(z.string(), conditionOperand)], {
  error: "expected a value, a list of values, or { operator: value }",
});

export const conditionSchema: z.ZodType<Condition> = z
  .object(
    {
      get all() {
        return z.array(conditionSchema).optional();
      },
      get any() {
        return z.array(conditionSchema).optional();
      },
      get not() {
        return conditionSchema.optional();
      },
    },
    { error: unlessMissing("a condition is a map: { field: value }, { all: [...] }, { any: [...] } or { not: {...} }") },
  )
  .catchall(fieldTest)
  .meta({ id: "condition", description: "Field tests (all must hold), combined with all / any / not." });

/** The most records an absence rule may expect: it keeps the block and time of that many (docs/absence.md). */
export const MAX_EXPECTED_RECORDS = 1000;

const expectSchema = z
  .strictObject({
    at_least: z
      .int({ error: "expected a whole number of records, e.g. 1" })
      .min(1, "must be at least 1: a rule that expects no record can never miss one")
      .max(MAX_EXPECTED_RECORDS, `at most ${MAX_EXPECTED_RECORDS}`),
    // Block timestamps are whole seconds.
    within: duration.refine((ms) => ms >= 1000, "must be at least 1s: block times are whole seconds"),
  })
  .meta({
    description:
      "An absence rule: it alerts when fewer than at_least matching records arrived within the last `within` of block time (not wall time), and resolves when they come back; it sends no alert per record (docs/absence.md).",
  });

/** A rule's own labels: names as Alertmanager's (not one kaiawatch sets), values text. */
const ruleLabels = z
  .record(z.string(), z.unknown())
  .superRefine((labels, ctx) => {
    for (const [name, value] of Object.entries(labels)) {
      const problem = labelNameProblem(name) ?? labelValueProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: [name], message: problem });
    }
  })
  .transform((labels) => labels as Record<string, string>)
  .meta({ description: 'Labels of the rule\'s alerts, e.g. { severity: critical, team: treasury }: routes match on them (docs/routes.md). Besides these every alert has rule, watch and source (and severity from `severity:`).', additionalProperties: { type: "string" } });

export const ruleSchema = z.strictObject({
  name: slug("a rule name"),
  watch: z.string().meta({ description: "The name of the watch whose records this rule sees." }),
  source: z.enum([...RECORD_FAMILIES, BALANCE_ALERT_SOURCE]).optional().meta({ description: "The record family (or `balances` for a balance watch); optional when the watch produces only one." }),
  when: conditionSchema.optional().meta({ description: "The condition. Absent: every record of the source matches." }),
  notify: z
    .array(z.string())
    .min(1)
    .superRefine(uniqueItems)
    .optional()
    .meta({ description: "Sink names: the rule's alerts go there, past the `routes:` tree (and its grouping). Absent: the tree routes them by their labels." }),
  labels: ruleLabels.optional(),
  group: z
    .strictObject({
      window: duration,
      max: z.int().positive().default(50),
      by: fieldName.optional(),
    })
    .optional()
    .meta({ description: "Gather alerts for `window` into one digest message (at most `max` alerts), per value of `by`." }),
  cooldown: duration.optional(),
  cooldown_key: fieldName.optional().meta({ description: "The field whose value has its own cooldown. Default: the whole rule." }),
  enrich: z.array(z.enum(ENRICHMENTS)).superRefine(uniqueItems).default([]),
  summary: text.optional().meta({ description: "Template of the alert's one-line summary, e.g. \"{{amount}} KAIA from {{from}}\"." }),
  severity: z.enum(ALERT_SEVERITIES).optional().meta({ description: "How bad its alerts are (PagerDuty's payload.severity). Default: the sink's `severity`." }),
  clear_after: z
    .int()
    .min(1)
    .optional()
    .meta({ description: "Balance rules: the alert resolves after this many readings in a row where the condition no longer holds (hysteresis against a balance hovering at the threshold). Default 2." }),
  expect: expectSchema.optional(),
  repeat_interval: positiveDuration
    .optional()
    .meta({ description: "Balance rules: a firing episode is sent again every this long (a reminder under the episode's id, with a repeat counter), at the first reading after it is due, until it resolves. Absent: once when it fires, once when it resolves." }),
});

// ---- routes ----

const matcherText = z.string().superRefine((text, ctx) => {
  try {
    parseMatchers(text);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
  }
});

const groupByLabel = z.string().refine((name) => name === GROUP_BY_ALL || LABEL_NAME_PATTERN.test(name), 'not a label name (or "..." for every label)');

/** One route of the `routes:` tree (docs/routes.md); the root's own rules are checked in resolve-routes.ts. */
export const routeSchema: z.ZodType<RouteSpec> = z
  .strictObject({
    matchers: z
      .array(matcherText)
      .optional()
      .meta({ description: 'Label matchers, all of which must hold: name=value, name!=value, name=~regex, name!~regex (RE2, anchored), e.g. severity="critical". An item may hold several, in Alertmanager\'s forms: \'{team="ops", severity!="info"}\'.' }),
    receiver: z
      .union([z.string(), z.array(z.string()).min(1).superRefine(uniqueItems)], { error: "expected a sink name or a list of sink names" })
      .optional()
      .meta({ description: "The sink (or list of sinks) the route sends to. Default: the parent's." }),
    continue: z.boolean().optional().meta({ description: "true: after this route matches, its next siblings are tried too. Default false." }),
    group_by: z
      .array(groupByLabel)
      .superRefine(uniqueItems)
      .optional()
      .meta({ description: 'Labels whose values make a group: one digest per group. ["..."]: every label (no aggregation). Default: the parent\'s; at the root, none: all of the route\'s alerts are one group.' }),
    group_wait: duration.optional().meta({ description: "How long a new group waits for more alerts before its first digest. Default: the parent's; 30s at the root." }),
    group_interval: positiveDuration.optional().meta({ description: "How long after a group's digest the next one of the same group may go. Default: the parent's; 5m at the root." }),
    repeat_interval: positiveDuration.optional().meta({ description: "How often a firing episode is sent again. Default: the parent's; 4h at the root." }),
    mute_time_intervals: z
      .array(z.string())
      .superRefine(uniqueItems)
      .optional()
      .meta({ description: "Names of time_intervals during which this route sends nothing: its alerts are recorded as muted, not sent (a firing episode still firing at the interval's end is sent then). Not on the root; not inherited." }),
    active_time_intervals: z
      .array(z.string())
      .superRefine(uniqueItems)
      .optional()
      .meta({ description: "Names of time_intervals outside all of which this route sends nothing (muted as by mute_time_intervals). Not on the root; not inherited." }),
    get routes() {
      return z.array(routeSchema).optional().meta({ description: "Child routes, tried in order." });
    },
  })
  .meta({ id: "route", description: "A route of the routes: tree (docs/routes.md)." });

// ---- time_intervals ----

/** A field of a time interval, checked by its parser (Alertmanager's messages). */
const checked = <T extends z.ZodType>(schema: T, parse: (value: z.infer<T>) => unknown) =>
  schema.superRefine((value, ctx) => {
    try {
      parse(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
    }
  });

const rangeItem = z.union([z.string(), z.int()], { error: "expected a value or a range such as \"1:5\"" });

const timeIntervalSchema: z.ZodType<TimeIntervalSpec> = z.strictObject({
  times: z
    .array(checked(z.strictObject({ start_time: z.string(), end_time: z.string() }), parseTimeRange))
    .optional()
    .meta({ description: 'Times of day, start inclusive, end exclusive, "HH:MM" (24:00 the end of the day), e.g. { start_time: "09:00", end_time: "17:00" }.' }),
  weekdays: z.array(checked(z.string(), parseWeekdayRange)).optional().meta({ description: 'Days of the week by name, or ranges: ["monday:friday", "sunday"].' }),
  days_of_month: z.array(checked(rangeItem, parseDayOfMonthRange)).optional().meta({ description: 'Days of the month, 1 to 31, or negative from the month\'s end (-1 is its last day), or ranges: ["1:5", "-3:-1"].' }),
  months: z.array(checked(rangeItem, parseMonthRange)).optional().meta({ description: 'Months by name or number (1 is January), or ranges: ["january:march", "12"].' }),
  years: z.array(checked(rangeItem, parseYearRange)).optional().meta({ description: 'Years, or ranges: ["2026:2027"].' }),
  location: checked(z.string(), parseLocation).optional().meta({ description: 'The IANA time zone the fields are read in, e.g. "Europe/Berlin" (its daylight saving time included). Default: UTC.' }),
});

/** One of `time_intervals:` (docs/routes.md#time-intervals), as Alertmanager's. */
export const namedTimeIntervalSchema: z.ZodType<NamedTimeIntervalSpec> = z
  .strictObject({
    name: z.string().min(1, "missing name in time interval"),
    time_intervals: z.array(timeIntervalSchema).meta({ description: "The intervals; the named interval holds when any of them does (one with no fields holds always)." }),
  })
  .meta({ id: "time_interval", description: "A named time interval that routes mute in (mute_time_intervals) or are active in (active_time_intervals)." });

// ---- inhibit_rules ----

const labelName = z.string().refine((name) => LABEL_NAME_PATTERN.test(name), 'not a label name: a letter or "_", then letters, digits or "_"');

/** One of `inhibit_rules:` (docs/reminders-and-inhibition.md), as Alertmanager's. */
export const inhibitRuleSchema: z.ZodType<InhibitRuleSpec> = z
  .strictObject({
    source_matchers: z
      .array(matcherText)
      .min(1, "name at least one matcher: which firing alerts inhibit")
      .meta({ description: 'Matchers a firing alert (a balance episode, a kaiawatch condition) must all meet to inhibit others, e.g. kind="source_failing" or severity="critical".' }),
    target_matchers: z
      .array(matcherText)
      .min(1, "name at least one matcher: which alerts are held back")
      .meta({ description: 'Matchers an alert must all meet to be held back while such a source fires, e.g. severity="warning".' }),
    equal: z
      .array(labelName)
      .superRefine(uniqueItems)
      .optional()
      .meta({ description: "Labels whose values the source and the alert must share (e.g. [watch]: only the same wallet's alerts). Default: none." }),
  })
  .meta({ id: "inhibit_rule", description: "An inhibit rule: while a matching source fires, matching alerts are held back (recorded, not sent)." });

// ---- the whole file ----

export const configSchema = z
  .strictObject({
    explorer: explorerSchema,
    chain: chainSchema,
    store: storeSchema,
    status: statusSchema,
    operational: operationalSchema,
    log: logSchema,
    defaults: defaultsSchema,
    watches: z.array(watchSchema, { error: (issue) => (issue.input === undefined ? "required: add at least one watch" : "expected a list of watches") }).min(1, "add at least one watch"),
    rules: z.array(ruleSchema).default([]),
    sinks: z.record(slug("a sink name"), sinkConfigSchema).default({}),
    routes: routeSchema.optional().meta({ description: "The routing tree: where the alerts of rules without notify: (and kaiawatch's operational alerts) go, by their labels, and how they are grouped (docs/routes.md)." }),
    time_intervals: z
      .array(namedTimeIntervalSchema)
      .default([])
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((interval, index) => {
          if (seen.has(interval.name)) ctx.addIssue({ code: "custom", path: [index, "name"], message: `time interval "${interval.name}" is not unique` });
          seen.add(interval.name);
        });
      })
      .meta({ description: "Alertmanager's time intervals, by name: routes name them in mute_time_intervals and active_time_intervals (docs/routes.md#time-intervals)." }),
    inhibit_rules: z
      .array(inhibitRuleSchema)
      .default([])
      .meta({ description: "Alertmanager's inhibition: while a source alert fires (a failing source, a critical balance), alerts its rule names are held back (docs/reminders-and-inhibition.md)." }),
  })
  .meta({ title: "kaiawatch configuration", description: "config.yaml of kaiawatch, the Kaia blockchain monitoring and alerting daemon." });

export const SECTION_SCHEMAS = {
  explorer: explorerSchema,
  chain: chainSchema,
  store: storeSchema,
  status: statusSchema,
  operational: operationalSchema,
  log: logSchema,
  defaults: defaultsSchema,
} as const;
