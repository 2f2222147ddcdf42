import type { SinkConfig } from "../notify/sinks/index.js";
import type { AlertSeverity } from "../model/alert-document.js";
import type { Enrichment } from "../model/enrichment.js";
import type { RuleSource } from "../model/alert-document.js";
import type { RecordFamily } from "../model/record.js";
import type { StartPosition } from "../model/start-position.js";
import type { Route } from "../notify/routes.js";
import type { InhibitRule } from "../notify/inhibit.js";

/**
 * The typed configuration, complete: every default is applied, durations are numbers of
 * milliseconds, and the keys are the same snake_case names as in config.yaml so that a
 * message about `watches[1].start` means the same thing in the file and in the code.
 */
export interface Config {
  explorer: ExplorerConfig;
  chain: ChainConfig;
  store: StoreConfig;
  status: StatusConfig;
  operational: OperationalConfig;
  log: LogConfig;
  defaults: DefaultsConfig;
  watches: WatchConfig[];
  rules: RuleConfig[];
  /** By sink name (the key in config.yaml, repeated in `name`). */
  sinks: Record<string, SinkConfig>;
  /** The `routes:` tree with inheritance applied; absent when the config has none. */
  routes?: Route;
  /** `inhibit_rules:`, parsed (docs/reminders-and-inhibition.md); empty when the config has none. */
  inhibit_rules: InhibitRule[];
}

/** Milliseconds. */
export type Duration = number;

/** Thresholds of kaiawatch's alerts about itself and of /readyz. */
export interface OperationalConfig {
  check_interval: Duration;
  source_failing_after: Duration;
  source_behind_blocks: number;
  sink_pending_age: Duration;
  sink_backlog_window: Duration;
  sink_backlog_growth: number;
  head_stuck_after: Duration;
  /** A condition still holding is alerted again every this long (a reminder); absent: never. */
  repeat_interval?: Duration;
}

export interface ExplorerConfig {
  base_url: string;
  api_key?: string;
  requests_per_second: number;
  daily_credit_budget?: number;
  max_retries: number;
  /** Longest silence (connect, headers, between body bytes). */
  timeout: Duration;
  /** Longest a whole request may take. */
  request_deadline: Duration;
  page_size: number;
  /** The API plan of the key: operation 7 is planned only on PRO_PLUS. */
  api_plan: ApiPlan;
}

export type ApiPlan = "FREE" | "PRO_PLUS";

/** Which sources serve a watch: the planner's cheapest (auto), its own, or a shared one. */
export type WatchVia = "auto" | "own" | "shared";

export interface ChainConfig {
  /** A slug used in alerts ("mainnet", "kairos", …). */
  network: string;
  rpc_url: string;
  lag_blocks: number;
  explorer_url: string;
  /** Longest one eth_blockNumber request may take. */
  request_deadline: Duration;
  /** How often the head is read for the sources with `schedule: head`. */
  head_interval: Duration;
  /** JSON-RPC requests a second to rpc_url, every reader together. */
  requests_per_second: number;
  /** Largest JSON-RPC request body: a longer log query is sent as several (get-logs.ts). */
  max_request_bytes: number;
  /** rpc_url serves debug_traceBlockByNumber: node-read watches read internal transactions from it (plan-node-traces.ts). */
  traces: boolean;
}

export interface StoreConfig {
  /** The SQLite file (the default one when `url` is set: it is then only a name for side files). */
  path: string;
  /** postgres://… : the store shared by replicas (a secret). */
  url?: string;
  /** With `url`: lease duration in ms. */
  lease: number;
  /** With `url`: this replica's id (generated when absent). */
  replica_id?: string;
  /** With `url`: PostgreSQL's statement_timeout for kaiawatch's sessions, in ms. */
  statement_timeout: number;
  /** With `url`: PostgreSQL's lock_timeout for kaiawatch's sessions, in ms. */
  lock_timeout: number;
  /** With `url`: the longest wait for a connection of the pool, in ms. */
  pool_timeout: number;
  /** How long delivered alerts are kept, in ms. */
  retention: number;
}

export interface StatusConfig {
  /** false: no status server. */
  listen: { host: string; port: number } | false;
  /** At least 16 characters, no whitespace. */
  token?: string;
  /** Host names requests may be addressed to, besides loopback names, IP addresses and the listen host. */
  allowed_hosts: string[];
  /** Without `token`: where the write API's generated token is kept (resolved: beside the store by default). */
  write_token_file: string;
  /** Loopback peers may write without a token (a trusted machine). */
  trust_loopback: boolean;
  /** A main thread held this long (ms) makes /healthz and /readyz answer 503 (a frozen disk). */
  frozen_after: number;
}

export interface LogConfig {
  level: LogLevel;
  format: "json" | "pretty";
}

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

/** Where a watch's log families (event logs, NFT transfers, token transfers) are read. */
export type LogSource = "explorer" | "node" | "both";

export interface DefaultsConfig {
  /** A croner pattern with a seconds field. */
  schedule: string;
  start: StartPosition;
  max_window_blocks: number;
  jitter: Duration;
  /** The longest one tick of a source may run before it is aborted. */
  tick_timeout: Duration;
  /** The watches' `source` when they give none. */
  source: LogSource;
}

/** A watch carries its effective schedule, start, window and jitter (its own or the defaults). */
interface WatchBase {
  name: string;
  schedule: string;
  start: StartPosition;
  max_window_blocks: number;
  jitter: Duration;
  via: WatchVia;
  /**
   * Where its event logs, NFT transfers and token transfers are read (its own or
   * defaults.source); every_block and balance watches read none and carry "explorer".
   */
  source: LogSource;
}

/**
 * A family an account watch lists in `sources`: one of ACCOUNT_SOURCES, which the registry
 * derives (schema.ts checks it at load). The type names every family: nothing narrows on
 * which families those are, so the list is not written twice.
 */
export type AccountSource = RecordFamily;

/** A wallet or contract address: its NFT transfers (op 3) and/or internal transactions (op 7). */
export interface AccountWatchConfig extends WatchBase {
  kind: "account";
  account: string;
  /** No duplicates; non-empty unless `tokens` is. */
  sources: AccountSource[];
  /** Only NFT transfers of this token contract (op 3 `contractAddress`). */
  nft_contract?: string;
  /**
   * KIP-7 token contracts, lowercase, no duplicates: the Transfer logs of each (op 11 with the
   * Transfer signature, one source per token, shared with every watch of it) whose `from` or
   * `to` is the account, read by rules as `event_logs` with the token fields. Empty: none.
   */
  tokens: string[];
  /** Function signatures as written: the transactions source names and decodes calls to them. Empty: none. */
  methods: string[];
}

/** NFT transfers of a token contract (op 4). */
export interface CollectionWatchConfig extends WatchBase {
  kind: "collection";
  collection: string;
  /** Decimal token id. */
  token_id?: string;
}

/** Event logs emitted by a contract (op 11). */
export interface ContractWatchConfig extends WatchBase {
  kind: "contract";
  contract: string;
  /**
   * Each entry is its own server-side filtered source: a canonical signature
   * ("Transfer(address,address,uint256)") or a 0x topic hash. Empty: every event, one source.
   */
  events: string[];
}

/**
 * Many accounts' token and NFT transfers under one watch and its rules, read from the node
 * only (one log query a window for all of them): what a list of deposit wallets needs.
 * `direction` and the alert's account are relative to the listed accounts.
 */
export interface AccountListWatchConfig extends WatchBase {
  kind: "accounts";
  /** Lowercase, no duplicates. */
  accounts: string[];
  /** nft_transfers or none (token transfers only): the families the node's log query serves. */
  sources: AccountSource[];
  nft_contract?: string;
  /** As an account watch's: lowercase KIP-7 contracts whose Transfer logs from or to a listed account are read. */
  tokens: string[];
}

/** Many contracts' event logs under one watch and its rules, read from the node only. */
export interface ContractListWatchConfig extends WatchBase {
  kind: "contracts";
  /** Lowercase, no duplicates. */
  contracts: string[];
  /** As a contract watch's; from the node one topic0 list for every listed contract. */
  events: string[];
}

/** Internal transactions of every block (op 8). */
export interface BlockWatchConfig extends WatchBase {
  kind: "every_block";
  every_block: true;
}

/** Balances of addresses, KAIA and optionally KIP-7, read at the head by JSON-RPC on the schedule. */
export interface BalanceWatchConfig extends WatchBase {
  kind: "balance";
  /** Lowercase addresses, no duplicates. */
  balance: string[];
  /** Lowercase KIP-7 token contracts; empty: KAIA only. */
  tokens: string[];
}

export type WatchConfig = AccountWatchConfig | AccountListWatchConfig | CollectionWatchConfig | ContractWatchConfig | ContractListWatchConfig | BlockWatchConfig | BalanceWatchConfig;
export type WatchKind = WatchConfig["kind"];

export type ConditionScalar = string | number | boolean | null;
export type ConditionOperand = ConditionScalar | ConditionScalar[];

/**
 * A rule condition as written, checked here only for its shape: an object of
 * field → value, list of values or `{ operator: value }`, combined with
 * `all: [...]`, `any: [...]` and `not: {...}`. The rules compiler checks fields and operators.
 */
export interface Condition {
  all?: Condition[];
  any?: Condition[];
  not?: Condition;
  [field: string]: ConditionOperand | { [operator: string]: ConditionOperand } | Condition[] | Condition | undefined;
}

export interface RuleConfig {
  name: string;
  watch: string;
  /** Resolved: given, or the only family the watch produces; "balances" for a balance watch. */
  source: RuleSource;
  /** Absent: every record of the source matches. */
  when?: Condition;
  /**
   * Where its alerts go: the rule's own `notify:` or, without it, the sinks the `routes:` tree
   * gives its labels (see `routed`). Non-empty; each one exists.
   */
  notify: string[];
  /** True when `notify` came from the routes tree (the rule has no `notify:`): its alerts are grouped as their routes say. */
  routed: boolean;
  /** The rule's own `labels:` (its alerts also carry rule, watch, source and severity). Empty: none. */
  labels: Record<string, string>;
  group?: { window: Duration; max: number; by?: string };
  cooldown?: Duration;
  cooldown_key?: string;
  enrich: Enrichment[];
  summary?: string;
  /** Copied into its alerts; PagerDuty's payload.severity. Absent: the sink's default. */
  severity?: AlertSeverity;
  /** Balance rules: readings in a row without the condition before the alert resolves. */
  clear_after?: number;
  /**
   * An absence rule: an alert when fewer than `at_least` matching records arrived within
   * the last `within` of block time, a resolve when they are back (docs/absence.md).
   */
  expect?: { at_least: number; within: Duration };
  /** Balance rules: a firing episode is sent again every this long (a reminder) until it resolves; absent: never. */
  repeat_interval?: Duration;
}

/**
 * Each sink type declares its keys once, in its own file under src/notify/sinks; the
 * config's sink types are derived from those schemas.
 */
export type { SinkConfig, SinkType } from "../notify/sinks/index.js";
