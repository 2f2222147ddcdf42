import type { z } from "zod";
import type { ConfigIssue } from "./errors.js";
import { SLUG_PATTERN, SECTION_SCHEMAS, WATCH_KINDS, ruleSchema, sinkSchema, watchSchema } from "./schema.js";
import { sourcesOfWatch } from "./sources-of-watch.js";
import { didYouMean } from "./suggest.js";
import type { Config, DefaultsConfig, RuleConfig, SinkConfig, WatchConfig, WatchKind } from "./types.js";

/** The URLs kaiawatch fills in when `chain.network` is one it knows. */
export const NETWORK_DEFAULTS: Record<string, { base_url: string; rpc_url: string; explorer_url: string }> = {
  mainnet: { base_url: "https://mainnet-oapi.kaiascan.io", rpc_url: "https://public-en.node.kaia.io", explorer_url: "https://kaiascan.io" },
  kairos: { base_url: "https://kairos-oapi.kaiascan.io", rpc_url: "https://public-en-kairos.node.kaia.io", explorer_url: "https://kairos.kaiascan.io" },
};

/** Keys that only make sense for one kind of watch. */
const ONLY_FOR: Record<string, WatchKind> = { sources: "account", nft_contract: "account", token_id: "collection", events: "contract" };

export interface ResolvedConfig {
  /** Built from the parts that are valid; complete when `issues` is empty and the schema passed. */
  config: Config;
  /** Problems that need more than one key (names, references, kinds), at paths of the file. */
  issues: Array<ConfigIssue & { atKey?: boolean }>;
  /** config.watches[k] is watches[watchIndex[k]] of the file (invalid watches are left out). */
  watchIndex: number[];
  ruleIndex: number[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseOr<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  return result.success ? result.data : schema.parse(undefined);
}

function buildWatch(kind: WatchKind, w: z.output<typeof watchSchema>, defaults: DefaultsConfig): WatchConfig | undefined {
  const base = {
    name: w.name,
    schedule: w.schedule ?? defaults.schedule,
    start: w.start ?? defaults.start,
    max_window_blocks: w.max_window_blocks ?? defaults.max_window_blocks,
    jitter: w.jitter ?? defaults.jitter,
  };
  if (kind === "account" && w.account !== undefined) {
    return { ...base, kind, account: w.account, sources: w.sources ?? ["nft_transfers"], nft_contract: w.nft_contract };
  }
  if (kind === "collection" && w.collection !== undefined) return { ...base, kind, collection: w.collection, token_id: w.token_id };
  if (kind === "contract" && w.contract !== undefined) return { ...base, kind, contract: w.contract, events: w.events ?? [] };
  if (kind === "every_block") return { ...base, kind, every_block: true };
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

  // Watches.
  const rawWatches = Array.isArray(root.watches) ? root.watches : [];
  const watchNames = new Map<string, number>();
  const watches: WatchConfig[] = [];
  const watchIndex: number[] = [];
  rawWatches.forEach((item, i) => {
    if (!isRecord(item)) return;
    let usable = true;
    if (typeof item.name === "string") {
      const first = watchNames.get(item.name);
      if (first !== undefined) {
        issues.push({ path: ["watches", i, "name"], message: `duplicate watch name "${item.name}" (also watches[${first}])` });
        usable = false;
      } else watchNames.set(item.name, i);
    }
    const kinds = WATCH_KINDS.filter((kind) => kind in item);
    const [kind] = kinds;
    if (kind === undefined) {
      issues.push({ path: ["watches", i], message: "a watch needs one of account, collection, contract or every_block" });
      return;
    }
    if (kinds.length > 1) {
      issues.push({ path: ["watches", i, kinds[1] ?? kind], message: `a watch has exactly one of account, collection, contract or every_block; this one has ${kinds.join(" and ")}`, atKey: true });
      return;
    }
    for (const [key, only] of Object.entries(ONLY_FOR)) {
      if (key in item && only !== kind) {
        issues.push({ path: ["watches", i, key], message: `applies to ${only} watches only (this is ${kind === "every_block" ? "an every_block" : `a ${kind}`} watch)`, atKey: true });
        usable = false;
      }
    }
    const parsed = watchSchema.safeParse(item);
    const watch = parsed.success && usable ? buildWatch(kind, parsed.data, defaults) : undefined;
    if (watch) {
      watches.push(watch);
      watchIndex.push(i);
    }
  });

  // Sinks: a map, so YAML itself refuses duplicate names.
  const rawSinks = isRecord(root.sinks) ? root.sinks : {};
  const sinks: Record<string, SinkConfig> = {};
  for (const [name, value] of Object.entries(rawSinks)) {
    if (!SLUG_PATTERN.test(name)) continue;
    const parsed = sinkSchema.safeParse(value);
    if (!parsed.success) continue;
    const sink = parsed.data;
    if (sink.type === "webhook" && !sink.allow_http && !sink.url.startsWith("https:")) {
      issues.push({ path: ["sinks", name, "url"], message: "must be https (set allow_http: true to send over plain http, e.g. on a private network)" });
      continue;
    }
    sinks[name] = { name, ...sink };
  }

  // Rules: references are checked against every name written, valid or not, so that a
  // broken watch or sink is reported once, at its own place, and not again at each rule.
  const rawRules = Array.isArray(root.rules) ? root.rules : [];
  // By name, not watches.find() per rule: a config of 10,000 watches and rules is checked in linear time.
  const watchByName = new Map(watches.map((w) => [w.name, w]));
  const ruleNames = new Map<string, number>();
  const rules: RuleConfig[] = [];
  const ruleIndex: number[] = [];
  rawRules.forEach((item, i) => {
    if (!isRecord(item)) return;
    let usable = true;
    if (typeof item.name === "string") {
      const first = ruleNames.get(item.name);
      if (first !== undefined) {
        issues.push({ path: ["rules", i, "name"], message: `duplicate rule name "${item.name}" (also rules[${first}])` });
        usable = false;
      } else ruleNames.set(item.name, i);
    }
    if (typeof item.watch === "string" && !watchNames.has(item.watch)) {
      issues.push({ path: ["rules", i, "watch"], message: `no watch named "${item.watch}"${didYouMean(item.watch, watchNames.keys())}` });
      usable = false;
    }
    if (Array.isArray(item.notify)) {
      item.notify.forEach((sink, j) => {
        if (typeof sink === "string" && !(sink in rawSinks)) {
          issues.push({ path: ["rules", i, "notify", j], message: `no sink named "${sink}"${didYouMean(sink, Object.keys(rawSinks))}` });
          usable = false;
        }
      });
    }
    const parsed = ruleSchema.safeParse(item);
    if (!parsed.success || !usable) return;
    const rule = parsed.data;
    const watch = watchByName.get(rule.watch);
    if (!watch) return; // the watch itself is invalid and reported at its place
    const families = sourcesOfWatch(watch);
    let source = rule.source;
    if (source === undefined) {
      if (families.length !== 1 || families[0] === undefined) {
        issues.push({ path: ["rules", i, "source"], message: `required: watch "${watch.name}" produces ${families.join(" and ")}; name one` });
        return;
      }
      source = families[0];
    } else if (!families.includes(source)) {
      issues.push({ path: ["rules", i, "source"], message: `watch "${watch.name}" produces ${families.join(" and ")}, not ${source}` });
      return;
    }
    if (rule.cooldown_key !== undefined && rule.cooldown === undefined) {
      issues.push({ path: ["rules", i, "cooldown_key"], message: "has no effect without cooldown" });
    }
    rules.push({ ...rule, source });
    ruleIndex.push(i);
  });

  const config: Config = {
    explorer: { ...explorer, base_url: networkUrl("explorer", "base_url", explorer.base_url) },
    chain: {
      ...chain,
      rpc_url: networkUrl("chain", "rpc_url", chain.rpc_url),
      explorer_url: networkUrl("chain", "explorer_url", chain.explorer_url),
    },
    store: parseOr(SECTION_SCHEMAS.store, root.store),
    status: parseOr(SECTION_SCHEMAS.status, root.status),
    log: parseOr(SECTION_SCHEMAS.log, root.log),
    defaults,
    watches,
    rules,
    sinks,
  };
  return { config, issues, watchIndex, ruleIndex };
}

