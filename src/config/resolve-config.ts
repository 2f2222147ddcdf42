import { dirname, join } from "node:path";
import type { z } from "zod";
import { isHeadSchedule } from "./schedule.js";
import type { ConfigIssue } from "./errors.js";
import { sinkConfigSchema } from "../notify/sinks/index.js";
import { DEFAULT_STORE_PATH, SLUG_PATTERN, WRITE_TOKEN_FILE_NAME, SECTION_SCHEMAS, WATCH_KINDS, ruleSchema, watchSchema } from "./schema.js";
import { sourcesOfWatch } from "./sources-of-watch.js";
import { defaultAccountSources } from "../families/registry.js";
import { resolveRoutes } from "./resolve-routes.js";
import { inhibitRuleSchema } from "./schema.js";
import { buildInhibitRules, type InhibitRule } from "../notify/inhibit.js";
import { ALERT_SEVERITIES, type AlertSeverity } from "../model/alert-document.js";
import { alertLabels } from "../notify/labels.js";
import { matchRoutes, receiversOf, type Route } from "../notify/routes.js";
import { didYouMean } from "./suggest.js";
import type { Config, DefaultsConfig, RuleConfig, SinkConfig, WatchConfig, WatchKind } from "./types.js";

/** The URLs kaiawatch fills in when `chain.network` is one it knows. */
export const NETWORK_DEFAULTS: Record<string, { base_url: string; rpc_url: string; explorer_url: string }> = {
  mainnet: { base_url: "https://mainnet-oapi.kaiascan.io", rpc_url: "https://public-en.node.kaia.io", explorer_url: "https://kaiascan.io" },
  kairos: { base_url: "https://kairos-oapi.kaiascan.io", rpc_url: "https://public-en-kairos.node.kaia.io", explorer_url: "https://kairos.kaiascan.io" },
};

/** Keys that only make sense for one kind of watch. */
const ONLY_FOR: Record<string, readonly WatchKind[]> = {
  sources: ["account", "accounts"],
  nft_contract: ["account", "accounts"],
  methods: ["account"],
  token_id: ["collection"],
  events: ["contract", "contracts"],
};
/** The kinds whose log families are read from the node or the explorer (`source`). */
const LOG_KINDS: readonly WatchKind[] = ["account", "accounts", "collection", "contract", "contracts"];
/** The list kinds: read from the node only (their `source` is node unless given otherwise, which is refused). */
const LIST_KINDS: readonly WatchKind[] = ["accounts", "contracts"];
/** The kinds that take `source`: with chain.traces, every_block too (its internal transactions traced by the node). */
const sourceKinds = (traces: boolean): readonly WatchKind[] => (traces ? [...LOG_KINDS, "every_block"] : LOG_KINDS);
const KIND_NAMES = "account, accounts, collection, contract, contracts, every_block or balance";
const aWatch = (kind: WatchKind) => (kind === "every_block" || kind === "accounts" ? `an ${kind}` : `a ${kind}`);

export interface ResolvedConfig {
  /** Built from the parts that are valid; complete when `issues` is empty and the schema passed. */
  config: Config;
  /**
   * What the other subsystems' checks (conditions, templates, enrichments) run on: `config`
   * plus every watch and rule that is wrong elsewhere but whose checked parts can be read,
   * each key that fails on its own left at its default. Without it a bad condition was
   * reported only once the rest of its rule was fixed. Equal to `config` when all is valid.
   */
  checkable: Config;
  checkWatchIndex: number[];
  checkRuleIndex: number[];
  /** Problems that need more than one key (names, references, kinds), at paths of the file. */
  issues: Array<ConfigIssue & { atKey?: boolean }>;
  /** config.watches[k] is watches[watchIndex[k]] of the file (invalid watches are left out). */
  watchIndex: number[];
  ruleIndex: number[];
}

/** Items kept from one list of the file, each with its index there: items[k] is the file's list[index[k]]. */
function keptItems<T>(): { items: T[]; index: number[]; keep(item: T, i: number): void } {
  const items: T[] = [];
  const index: number[] = [];
  return {
    items,
    index,
    keep(item, i) {
      items.push(item);
      index.push(i);
    },
  };
}

/**
 * Takes the name of `section[i]` for it, or reports it as a duplicate of the first item that
 * has it (false: the item is not usable). An item without a string name claims nothing.
 */
function claimName(names: Map<string, number>, section: "rules" | "watches", item: Record<string, unknown>, i: number, issues: ResolvedConfig["issues"]): boolean {
  if (typeof item.name !== "string") return true;
  const first = names.get(item.name);
  if (first === undefined) {
    names.set(item.name, i);
    return true;
  }
  issues.push({ path: [section, i, "name"], message: `duplicate ${section === "rules" ? "rule" : "watch"} name "${item.name}" (also ${section}[${first}])` });
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Each key of `item` parsed on its own by its schema in `shape`; keys that fail are left
 * out (their default applies), so one wrong key does not hide the others from the checks.
 */
function fieldwise(shape: Record<string, z.ZodType>, item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(shape)) {
    const parsed = schema.safeParse(item[key]);
    if (parsed.success && parsed.data !== undefined) out[key] = parsed.data;
  }
  return out;
}

/** A sink that fails the schema, rebuilt from the keys valid on their own; undefined when a required one is wrong. */
function sinkGuess(value: unknown): z.output<typeof sinkConfigSchema> | undefined {
  if (!isRecord(value)) return undefined;
  const option = sinkConfigSchema.options.find((candidate) => candidate.shape.type.safeParse(value.type).success);
  if (!option) return undefined;
  const whole = option.safeParse(value);
  if (whole.success) return whole.data;
  // The raw values of the keys valid on their own, parsed again together (transforms such
  // as durations cannot be applied twice).
  const valid = Object.fromEntries(Object.entries(value).filter(([key]) => key in option.shape && (option.shape as Record<string, z.ZodType>)[key]?.safeParse(value[key]).success));
  const parsed = option.safeParse(valid);
  return parsed.success ? parsed.data : undefined;
}

function parseOr<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  return result.success ? result.data : schema.parse(undefined);
}

function buildWatch(kind: WatchKind, w: z.output<typeof watchSchema>, defaults: DefaultsConfig, traces: boolean): WatchConfig | undefined {
  // Each watch is built by adding its keys to a fresh literal, never by spreading a shared one:
  // V8 gives an object made by spread a hidden class of its own once the spread's cache gives
  // up (after a few dozen watches), and the config keeps its watches for the life of the
  // daemon: 0.4 KB a watch more.
  const base = () => ({
    name: w.name,
    schedule: w.schedule ?? defaults.schedule,
    start: w.start ?? defaults.start,
    max_window_blocks: w.max_window_blocks ?? defaults.max_window_blocks,
    jitter: w.jitter ?? defaults.jitter,
    via: w.via ?? "auto",
    // Only the watches with log families (and with chain.traces every_block) read from somewhere else than the explorer.
    // A list watch is read from the node whatever defaults.source says (another source is refused in resolveWatches).
    source: LIST_KINDS.includes(kind) ? ("node" as const) : sourceKinds(traces).includes(kind) ? (w.source ?? defaults.source) : ("explorer" as const),
  });
  if (kind === "accounts" && w.accounts !== undefined) {
    const tokens = (w.tokens ?? []).map((token) => token.toLowerCase());
    const sources = w.sources ?? (tokens.length > 0 ? [] : defaultAccountSources());
    return Object.assign(base(), { kind, accounts: w.accounts.map((a) => a.toLowerCase()), sources, nft_contract: w.nft_contract?.toLowerCase(), tokens });
  }
  if (kind === "contracts" && w.contracts !== undefined) return Object.assign(base(), { kind, contracts: w.contracts.map((a) => a.toLowerCase()), events: w.events ?? [] });
  if (kind === "account" && w.account !== undefined) {
    const tokens = (w.tokens ?? []).map((token) => token.toLowerCase());
    // A watch of a wallet's tokens alone should not also pay for its NFT transfers.
    const sources = w.sources ?? (tokens.length > 0 ? [] : defaultAccountSources());
    return Object.assign(base(), { kind, account: w.account, sources, nft_contract: w.nft_contract, tokens, methods: w.methods ?? [] });
  }
  if (kind === "collection" && w.collection !== undefined) return Object.assign(base(), { kind, collection: w.collection, token_id: w.token_id });
  if (kind === "contract" && w.contract !== undefined) return Object.assign(base(), { kind, contract: w.contract, events: w.events ?? [] });
  if (kind === "every_block") return Object.assign(base(), { kind, every_block: true as const });
  if (kind === "balance" && w.balance !== undefined) {
    return Object.assign(base(), { kind, balance: w.balance.map((a) => a.toLowerCase()), tokens: (w.tokens ?? []).map((t) => t.toLowerCase()) });
  }
  return undefined;
}

/**
 * Builds the typed Config from the raw document and checks what spans several keys:
 * unique names, exactly one kind per watch, a rule's watch, source and sinks. It works
 * from the raw data and from each part that validates on its own, so these problems are
 * reported together with the schema's, not after the user fixed those.
 */
export function resolveConfig(raw: unknown): ResolvedConfig {
  const root = isRecord(raw) ? raw : {};
  const issues: ResolvedConfig["issues"] = [];

  const explorer = parseOr(SECTION_SCHEMAS.explorer, root.explorer);
  const chain = parseOr(SECTION_SCHEMAS.chain, root.chain);
  const defaults = parseOr(SECTION_SCHEMAS.defaults, root.defaults);
  const network = NETWORK_DEFAULTS[chain.network];
  const networkUrl = (section: "explorer" | "chain", key: "base_url" | "rpc_url" | "explorer_url", given: string | undefined): string => {
    if (given !== undefined) return given;
    if (network) return network[key];
    issues.push({ path: [section, key], message: `required for network "${chain.network}" (kaiawatch knows the URLs of ${Object.keys(NETWORK_DEFAULTS).join(" and ")} only)` });
    return "";
  };

  const { watchNames, watches, checkWatches } = resolveWatches(root, defaults, chain.traces, issues);

  // Sinks: a map, so YAML itself refuses duplicate names.
  const rawSinks = isRecord(root.sinks) ? root.sinks : {};
  const sinks: Record<string, SinkConfig> = {};
  const checkSinks: Record<string, SinkConfig> = {};
  for (const [name, value] of Object.entries(rawSinks)) {
    if (!SLUG_PATTERN.test(name)) continue;
    // From the raw value, so that it is reported along with the sink's other mistakes.
    if (isRecord(value) && value.type === "webhook" && value.allow_http !== true && typeof value.url === "string" && /^http:/i.test(value.url)) {
      issues.push({ path: ["sinks", name, "url"], message: "must be https (set allow_http: true to send over plain http, e.g. on a private network)" });
      const guess = sinkGuess(value);
      if (guess) checkSinks[name] = { name, ...guess };
      continue;
    }
    const parsed = sinkConfigSchema.safeParse(value);
    if (!parsed.success) {
      // Its templates and options are still checked when what fails is an optional key.
      const guess = sinkGuess(value);
      if (guess) checkSinks[name] = { name, ...guess };
      continue;
    }
    const sink = parsed.data;
    // A heartbeat pings while kaiawatch is ready; an operational alert sent to it would be lost.
    if (sink.type === "heartbeat" && sink.operational) issues.push({ path: ["sinks", name, "operational"], message: "a heartbeat sink receives no alerts (it pings while kaiawatch is ready): remove operational: true" });
    checkSinks[name] = { name, ...sink };
    sinks[name] = { name, ...sink };
  }

  const routes = resolveRoutes(root.routes, rawSinks, issues, root.time_intervals);
  const inhibitRules = resolveInhibitRules(root.inhibit_rules);

  // Rules: references are checked against every name written, valid or not, so that a
  // broken watch or sink is reported once, at its own place, and not again at each rule.
  const rawRules = Array.isArray(root.rules) ? root.rules : [];
  // By name, not watches.find() per rule: a config of 10,000 watches and rules is checked in linear time.
  const watchByName = new Map(watches.items.map((w) => [w.name, w]));
  const checkWatchByName = new Map(checkWatches.items.map((w) => [w.name, w]));
  const ruleNames = new Map<string, number>();
  const rules = keptItems<RuleConfig>();
  const checkRules = keptItems<RuleConfig>();
  rawRules.forEach((item, i) => {
    if (!isRecord(item)) return;
    let usable = claimName(ruleNames, "rules", item, i, issues);
    if (typeof item.watch === "string" && !watchNames.has(item.watch)) {
      issues.push({ path: ["rules", i, "watch"], message: `no watch named "${item.watch}"${didYouMean(item.watch, watchNames.keys())}` });
      usable = false;
    }
    if (Array.isArray(item.notify)) {
      item.notify.forEach((sink, j) => {
        if (typeof sink === "string" && !(sink in rawSinks)) {
          issues.push({ path: ["rules", i, "notify", j], message: `no sink named "${sink}"${didYouMean(sink, Object.keys(rawSinks))}` });
          usable = false;
        } else if (typeof sink === "string" && isRecord(rawSinks[sink]) && rawSinks[sink].type === "heartbeat") {
          issues.push({ path: ["rules", i, "notify", j], message: `"${sink}" is a heartbeat sink: it pings while kaiawatch is ready and receives no alerts (name another sink)` });
          usable = false;
        }
      });
    }
    if (item.notify === undefined && root.routes === undefined) {
      issues.push({ path: ["rules", i], message: "needs notify: (sink names) or a routes: tree to send its alerts to" });
      usable = false;
    }
    const severityLabel = isRecord(item.labels) ? item.labels.severity : undefined;
    if (typeof severityLabel === "string" && typeof item.severity === "string" && severityLabel !== item.severity) {
      issues.push({ path: ["rules", i, "labels", "severity"], message: `disagrees with the rule's severity: ${item.severity}; give one of the two` });
      usable = false;
    }
    if (typeof item.cooldown_key === "string" && item.cooldown === undefined) {
      issues.push({ path: ["rules", i, "cooldown_key"], message: "has no effect without cooldown" });
    }
    const parsed = ruleSchema.safeParse(item);
    // Each part on its own, for the checks, when the rule as a whole is wrong.
    const fields = fieldwise(ruleSchema.shape, item) as Partial<z.output<typeof ruleSchema>>;
    const rule: z.output<typeof ruleSchema> = parsed.success
      ? parsed.data
      : { enrich: [], ...fields, name: typeof item.name === "string" ? item.name : `#${i + 1}`, watch: typeof item.watch === "string" ? item.watch : "" };
    const watch = watchByName.get(rule.watch) ?? checkWatchByName.get(rule.watch);
    let source = rule.source;
    let sourceKnown = true;
    if (watch) {
      const families = sourcesOfWatch(watch);
      if (source === undefined) {
        if (families.length !== 1 || families[0] === undefined) {
          issues.push({ path: ["rules", i, "source"], message: `required: watch "${watch.name}" produces ${families.join(" and ")}; name one` });
          sourceKnown = false;
        } else source = families[0];
      } else if (!families.includes(source)) {
        issues.push({ path: ["rules", i, "source"], message: `watch "${watch.name}" produces ${families.join(" and ")}, not ${source}` });
        // The conditions are still checked against the source the rule names: their
        // mistakes are the rule's own, whichever of watch or source the user then fixes.
        usable = false;
      }
    }
    if (source === undefined || !sourceKnown) return;
    const resolved = withRouting({ ...rule, source }, routes);
    if (parsed.success && usable && watchByName.has(rule.watch)) rules.keep(resolved, i);
    checkRules.keep(resolved, i);
  });

  const store = withStorePath(parseOr(SECTION_SCHEMAS.store, root.store));
  const config: Config = {
    explorer: { ...explorer, base_url: networkUrl("explorer", "base_url", explorer.base_url) },
    chain: {
      ...chain,
      rpc_url: networkUrl("chain", "rpc_url", chain.rpc_url),
      explorer_url: networkUrl("chain", "explorer_url", chain.explorer_url),
    },
    store,
    status: withWriteTokenFile(parseOr(SECTION_SCHEMAS.status, root.status), store.path),
    operational: parseOr(SECTION_SCHEMAS.operational, root.operational),
    log: parseOr(SECTION_SCHEMAS.log, root.log),
    defaults,
    watches: watches.items,
    rules: rules.items,
    sinks,
    ...(routes === undefined ? {} : { routes }),
    inhibit_rules: inhibitRules,
  };
  const checkable: Config = { ...config, watches: checkWatches.items, rules: checkRules.items, sinks: checkSinks };
  return { config, checkable, issues, watchIndex: watches.index, ruleIndex: rules.index, checkWatchIndex: checkWatches.index, checkRuleIndex: checkRules.index };
}

/**
 * The watches: those that are valid, and for the rules' checks also the ones wrong
 * elsewhere whose name, kind and target can be read; each with its index in the file.
 */
function resolveWatches(root: Record<string, unknown>, defaults: DefaultsConfig, traces: boolean, issues: ResolvedConfig["issues"]) {
  const rawWatches = Array.isArray(root.watches) ? root.watches : [];
  const watchNames = new Map<string, number>();
  const watches = keptItems<WatchConfig>();
  const checkWatches = keptItems<WatchConfig>();
  rawWatches.forEach((item, i) => {
    if (!isRecord(item)) return;
    const duplicate = !claimName(watchNames, "watches", item, i, issues);
    let usable = !duplicate;
    const kinds = WATCH_KINDS.filter((kind) => kind in item);
    const [kind] = kinds;
    if (kind === undefined) {
      issues.push({ path: ["watches", i], message: `a watch needs one of ${KIND_NAMES}` });
      return;
    }
    if (kinds.length > 1) {
      issues.push({ path: ["watches", i, kinds[1] ?? kind], message: `a watch has exactly one of ${KIND_NAMES}; this one has ${kinds.join(" and ")}`, atKey: true });
      return;
    }
    for (const [key, only] of Object.entries(ONLY_FOR)) {
      if (key in item && !only.includes(kind)) {
        issues.push({ path: ["watches", i, key], message: `applies to ${only.join(" and ")} watches only (this is ${aWatch(kind)} watch)`, atKey: true });
        usable = false;
      }
    }
    if ("tokens" in item && kind !== "account" && kind !== "accounts" && kind !== "balance") {
      issues.push({ path: ["watches", i, "tokens"], message: `applies to account, accounts and balance watches only (this is ${aWatch(kind)} watch)`, atKey: true });
      usable = false;
    }
    if ("source" in item && kind === "every_block" && !traces) {
      issues.push({ path: ["watches", i, "source"], message: "an every_block watch reads internal transactions, which the node gives only by tracing blocks: set chain.traces: true if chain.rpc_url serves debug_traceBlockByNumber (kaiawatch doctor says whether it does), or remove source", atKey: true });
      usable = false;
    } else if ("source" in item && !sourceKinds(traces).includes(kind)) {
      issues.push({ path: ["watches", i, "source"], message: `applies to contract, collection, account and every_block watches only (this is ${aWatch(kind)} watch, read from the node)`, atKey: true });
      usable = false;
    }
    // The explorer answers one address a request: a list of 10,000 would be 10,000 sources.
    if (LIST_KINDS.includes(kind) && "source" in item && item.source !== "node") {
      issues.push({ path: ["watches", i, "source"], message: `${aWatch(kind)} watch is read from the node only (one log query a window for every listed address; the explorer takes a request per address): remove source, or give each address a watch of its own to read it from the explorer`, atKey: true });
      usable = false;
    }
    if (kind === "accounts" && Array.isArray(item.sources)) {
      const others = item.sources.filter((family) => family !== "nft_transfers");
      if (others.length > 0) {
        issues.push({ path: ["watches", i, "sources"], message: `an accounts watch reads nft_transfers (and tokens) from the node; ${others.join(" and ")} need an account watch per account`, atKey: true });
        usable = false;
      }
    }
    if (kind === "account" && typeof item.source === "string" && item.source !== "explorer") {
      const tokens = Array.isArray(item.tokens) && item.tokens.length > 0;
      const families = Array.isArray(item.sources) ? item.sources : tokens ? [] : ["nft_transfers"];
      if (!tokens && !families.includes("nft_transfers") && !(traces && families.includes("internal_transactions"))) {
        const internal = families.includes("internal_transactions") ? " (internal_transactions too with chain.traces: true, where chain.rpc_url traces blocks)" : "";
        issues.push({ path: ["watches", i, "source"], message: `the node reads an account watch's nft_transfers and tokens${internal}; this one has neither (transactions come from the node always): remove source or add nft_transfers to sources`, atKey: true });
        usable = false;
      }
    }
    // Balances are read at the head on a clock: a head-triggered balance read would be a read a block.
    if (kind === "balance" && isHeadSchedule(typeof item.schedule === "string" ? item.schedule : defaults.schedule)) {
      const own = "schedule" in item;
      issues.push({ path: own ? ["watches", i, "schedule"] : ["watches", i], message: `a balance watch reads balances on a clock schedule, not "head"${own ? "" : " (defaults.schedule is head: give this watch a schedule of its own)"}`, atKey: own });
      usable = false;
    }
    const parsed = watchSchema.safeParse(item);
    const watch = parsed.success && usable ? buildWatch(kind, parsed.data, defaults, traces) : undefined;
    if (watch) {
      watches.keep(watch, i);
      checkWatches.keep(watch, i);
      return;
    }
    // For the rules' checks only: the name rules refer to (as written), the kind, and the
    // watched address as written (a mistyped one still makes `direction` meaningful).
    if (duplicate || typeof item.name !== "string") return;
    const fields = fieldwise(watchSchema.shape, item);
    const raw = item[kind];
    // A balance or list watch lists addresses; the others name one.
    const listed = kind === "balance" || LIST_KINDS.includes(kind);
    const target = listed ? (Array.isArray(raw) ? raw.filter((a): a is string => typeof a === "string") : []) : typeof raw === "string" ? raw : "";
    const guess = buildWatch(kind, { ...fields, name: item.name, [kind]: kind === "every_block" ? true : target } as z.output<typeof watchSchema>, defaults, traces);
    if (guess) checkWatches.keep(guess, i);
  });
  return { watchNames, watches, checkWatches };
}


/**
 * A rule's labels and where its alerts go. Its labels are fixed by the config (its own, its
 * severity, its name, watch and source), so the tree's answer for them is found once, here:
 * the daemon, `replay` and `validate` read it as `notify`. A `severity` label that is one of
 * the four severities is the rule's severity too (PagerDuty's), when the rule gives none.
 */
function withRouting(rule: Omit<RuleConfig, "notify" | "routed" | "labels"> & { notify?: string[]; labels?: Record<string, string> }, routes: Route | undefined): RuleConfig {
  const labels = rule.labels ?? {};
  const severityLabel = labels.severity;
  const severity = rule.severity ?? ((ALERT_SEVERITIES as readonly string[]).includes(severityLabel ?? "") ? (severityLabel as AlertSeverity) : undefined);
  const base = { ...rule, labels, ...(severity === undefined ? {} : { severity }) };
  if (rule.notify !== undefined) return { ...base, notify: rule.notify, routed: false };
  if (routes === undefined) return { ...base, notify: [], routed: false };
  const all = alertLabels({ rule: rule.name, watch: rule.watch, source: rule.source, labels, ...(severity === undefined ? {} : { severity }) });
  return { ...base, notify: receiversOf(matchRoutes(routes, all)), routed: true };
}

/** The file store's default path applies when neither a path nor a PostgreSQL URL is given. */
function withStorePath(store: z.output<typeof SECTION_SCHEMAS.store>): Config["store"] {
  return { ...store, path: store.path ?? DEFAULT_STORE_PATH };
}

/** The write token lives beside the store by default: the daemon's own folder, which its user owns. */
function withWriteTokenFile(status: z.output<typeof SECTION_SCHEMAS.status>, storePath: string): Config["status"] {
  return { ...status, write_token_file: status.write_token_file ?? join(dirname(storePath), WRITE_TOKEN_FILE_NAME) };
}

/**
 * The `inhibit_rules:` that validate, parsed; the schema reports the others at their key path
 * (a rule that does not validate is left out here, and the config is refused anyway).
 */
function resolveInhibitRules(raw: unknown): InhibitRule[] {
  if (!Array.isArray(raw)) return [];
  const valid = raw.flatMap((item, index) => {
    const parsed = inhibitRuleSchema.safeParse(item);
    return parsed.success ? [{ index, spec: parsed.data }] : [];
  });
  return valid.map(({ index, spec }) => ({ ...buildInhibitRules([spec])[0]!, id: `inhibit_rules[${index}]` }));
}
