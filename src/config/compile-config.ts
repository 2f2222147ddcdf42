import { KaiawatchError } from "../common/errors.js";
import type { TokenInfo } from "../chain/token-info.js";
import { isFamilyName, tokenTransferFamily } from "../families/registry.js";
import type { CompiledCondition } from "../rules/compile-condition.js";
import type { ConditionPath } from "../rules/parse-condition.js";
import { parseBalanceCondition, type BalanceCondition } from "../rules/balance-condition.js";
import type { TokenFieldContext } from "../families/field-kinds.js";
import { compileRuleCondition, formatPath, type RuleConditionInput } from "../rules/validate-rules.js";
import type { Route } from "../notify/routes.js";
import type { ConfigIssue } from "./errors.js";
import { compileSchedule, type Schedule } from "./schedule.js";
import type { Config, RuleConfig, WatchConfig } from "./types.js";
import { watchedAccountsOf } from "./watched-accounts.js";
import { internalTransactionsSource } from "./sources-of-watch.js";

/** Decimals and symbols of the token watches' tokens, by lowercase address (read at start-up over JSON-RPC). */
export type TokenInfos = ReadonlyMap<string, TokenInfo>;

/** A rule as the runtime reads it: its `when` parsed and compiled, once. */
export interface CompiledRule {
  readonly rule: RuleConfig;
  /**
   * A record rule's condition against its source. A token watch's rule on its Transfer logs:
   * compiled for the shape of its amounts only, until its tokens are read (compileTokenRules).
   */
  readonly condition?: CompiledCondition;
  /** A token watch's rule on its Transfer logs, per token of the watch in that token's units, once the tokens are read. */
  readonly tokenConditions?: ReadonlyMap<string, CompiledCondition>;
  /** A balance rule's condition; token amounts in their tokens' decimals once the tokens are read. */
  readonly balance?: BalanceCondition;
}

/**
 * What the daemon, the CLI and the checks read of a config instead of its raw values (as
 * Ponder's build turns the user's config into the values its runtime reads): every rule's
 * condition, every schedule as croner has parsed it, the routes tree. Made once per load
 * and per reload, in the main thread (closures do not cross to the parser's worker).
 */
export interface CompiledConfig {
  /** By rule name (names are unique). */
  readonly rules: ReadonlyMap<string, CompiledRule>;
  /** By pattern as written: every watch's schedule and the default one. */
  readonly schedules: ReadonlyMap<string, Schedule>;
  readonly routes?: Route;
  /** The tokens the token rules were compiled in (compileTokenRules); absent: before they are read. */
  readonly tokens?: TokenInfos;
}

export interface CompileOutcome {
  compiled: CompiledConfig;
  /** Problems at their key paths; `compiled` is usable only when there are none. */
  issues: ConfigIssue[];
}

/** A rule on the Transfer logs of an account watch's tokens. */
function isTokenRule(watch: WatchConfig, rule: RuleConfig): watch is WatchConfig & { kind: "account" | "accounts" } {
  return (watch.kind === "account" || watch.kind === "accounts") && watch.tokens.length > 0 && rule.source === tokenTransferFamily().name;
}

/** The token fields' context of a token watch's rule (see fields.ts). */
export function tokenFieldContext(watch: WatchConfig & { kind: "account" | "accounts" }, token: string, tokens: TokenInfos | undefined): TokenFieldContext {
  const otherSymbols = watch.tokens.filter((other) => other !== token).flatMap((other) => tokens?.get(other)?.symbol ?? []);
  return { info: tokens?.get(token), otherSymbols };
}

/** The token fields' context of a rule checked before its tokens are read: any unit is accepted then. */
const TOKEN_UNREAD: TokenFieldContext = { info: undefined, otherSymbols: [] };

/**
 * Compiles rule conditions, each distinct one once: a compiled condition depends only on its
 * `when`, its family, where its records are read, whether its watch has accounts (which it
 * is then tested against, not bound to) and its token's context, so 10,000 rules written
 * alike on 10,000 watches hold one (about 0.8 KB a rule otherwise). `tokenKey` names the token
 * context (undefined: none); a `when` that is not plain JSON (a config built in code) is
 * compiled on its own. Problems are not kept: each names its rule and place.
 */
function createConditionCompiler() {
  const known = new Map<string, CompiledCondition>();
  return (input: RuleConditionInput, at: ConditionPath, tokenKey: string | undefined) => {
    let key: string | undefined;
    try {
      key = `${input.family}\u0000${input.reader ?? ""}\u0000${input.watchedAccounts === undefined ? 0 : 1}\u0000${tokenKey ?? ""}\u0000${JSON.stringify(input.when, distinctJson)}`;
    } catch {
      key = undefined;
    }
    const found = key === undefined ? undefined : known.get(key);
    if (found !== undefined) return { ok: true as const, condition: found };
    const compiled = compileRuleCondition(input, at);
    if (compiled.ok && key !== undefined) known.set(key, compiled.condition);
    return compiled;
  };
}

/** JSON that tells undefined, NaN and the infinities apart (JSON writes null or nothing for them): not the same `when`. */
const distinctJson = (_key: string, value: unknown): unknown => (value === undefined || (typeof value === "number" && !Number.isFinite(value)) ? `\u0000${String(value)}` : value);

function balanceIssues(rule: RuleConfig, index: number, issues: ReadonlyArray<{ path: (string | number)[]; message: string }>): ConfigIssue[] {
  return issues.map((issue) => ({ path: ["rules", index, "when", ...issue.path], message: `rule "${rule.name}": ${issue.message}` }));
}

/**
 * Compiles a config: each rule's `when` against its source (a balance rule's against its
 * watch's assets), each schedule. Rules whose watch or source is itself wrong are left out:
 * the loader reports those. Token amounts are checked for their shape only; their tokens'
 * decimals and symbols are read at start-up (compileTokenRules).
 */
export function compileConfig(config: Config): CompileOutcome {
  const issues: ConfigIssue[] = [];
  const watches = new Map<string, WatchConfig>();
  for (const watch of config.watches) watches.set(watch.name, watch);
  const rules = new Map<string, CompiledRule>();
  const compileCondition = createConditionCompiler();
  config.rules.forEach((rule, index) => {
    const watch = watches.get(rule.watch);
    if (watch === undefined) return;
    if (rule.source === "balances") {
      if (watch.kind !== "balance") return;
      const parsed = parseBalanceCondition(rule.when, undefined, watch.tokens.length);
      if (parsed.ok) rules.set(rule.name, { rule, balance: parsed.condition });
      else issues.push(...balanceIssues(rule, index, parsed.issues));
      return;
    }
    const family = rule.source;
    if (!isFamilyName(family)) return;
    const tokenRule = isTokenRule(watch, rule);
    const compiled = compileCondition(
      {
        name: rule.name,
        family,
        when: rule.when,
        ...(watchedAccountsOf(watch) === undefined ? {} : { watchedAccounts: watchedAccountsOf(watch) }),
        ...(tokenRule ? { token: TOKEN_UNREAD } : {}),
        // Internal transactions from the node's traces lack some of the explorer's fields.
        ...(family === "internal_transactions" ? { reader: internalTransactionsSource(watch, config.chain.traces) } : {}),
      },
      ["rules", index, "when"],
      tokenRule ? "unread" : undefined,
    );
    if (compiled.ok) rules.set(rule.name, { rule, condition: compiled.condition });
    else issues.push(...compiled.issues);
  });
  const schedules = new Map<string, Schedule>();
  for (const pattern of [config.defaults.schedule, ...config.watches.map((watch) => watch.schedule)]) {
    if (schedules.has(pattern)) continue;
    // The schema has checked each one where it is written.
    const compiled = compileSchedule(pattern);
    if (compiled.ok) schedules.set(pattern, compiled.schedule);
  }
  return { compiled: { rules, schedules, ...(config.routes === undefined ? {} : { routes: config.routes }) }, issues };
}

/**
 * The token rules compiled again in their tokens' units, now that their decimals and symbols
 * are read: a token watch's Transfer-log rules once per token, its balance rules with token
 * amounts. Rules of a watch with a token in `skip` (not a token) are left as they were.
 * Every problem once, at its key path (one mistake is not repeated per token).
 */
export function compileTokenRules(config: Config, compiled: CompiledConfig, tokens: TokenInfos, skip: ReadonlySet<string> = new Set()): CompileOutcome {
  const issues: ConfigIssue[] = [];
  const watches = new Map<string, WatchConfig>();
  for (const watch of config.watches) watches.set(watch.name, watch);
  const rules = new Map(compiled.rules);
  const compileCondition = createConditionCompiler();
  // One context per token and list of tokens: the rules of every watch of the same tokens share it, and their conditions with it.
  const contexts = new Map<string, TokenFieldContext>();
  const contextOf = (watch: WatchConfig & { kind: "account" | "accounts" }, token: string, key: string) => {
    let context = contexts.get(key);
    if (context === undefined) contexts.set(key, (context = tokenFieldContext(watch, token, tokens)));
    return context;
  };
  config.rules.forEach((rule, index) => {
    const watch = watches.get(rule.watch);
    const before = rules.get(rule.name);
    if (watch === undefined || before === undefined || (watch.kind !== "account" && watch.kind !== "accounts" && watch.kind !== "balance") || watch.tokens.length === 0) return;
    if (watch.tokens.some((token) => skip.has(token))) return;
    if (watch.kind === "balance") {
      const infos = watch.tokens.flatMap((token) => tokens.get(token) ?? []);
      const parsed = parseBalanceCondition(rule.when, infos, watch.tokens.length);
      if (parsed.ok) rules.set(rule.name, { ...before, balance: parsed.condition });
      else issues.push(...balanceIssues(rule, index, parsed.issues));
      return;
    }
    if (!isTokenRule(watch, rule)) return;
    const perToken = new Map<string, CompiledCondition>();
    for (const token of watch.tokens) {
      const key = `${token} of ${watch.tokens.join(" ")}`;
      const compiled = compileCondition({ name: rule.name, family: tokenTransferFamily().name, when: rule.when, watchedAccounts: watchedAccountsOf(watch), token: contextOf(watch, token, key) }, ["rules", index, "when"], key);
      if (compiled.ok) perToken.set(token, compiled.condition);
      else issues.push(...compiled.issues);
    }
    rules.set(rule.name, { ...before, tokenConditions: perToken });
  });
  const seen = new Set<string>();
  const unique = issues.filter((issue) => {
    const line = `${formatPath(issue.path)}: ${issue.message}`;
    return seen.has(line) ? false : (seen.add(line), true);
  });
  return { compiled: { ...compiled, rules, tokens }, issues: unique };
}

/** A config was compiled with problems where none were expected (one built in code, unchecked). */
export class ConfigNotCompiledError extends KaiawatchError {
  override name = "ConfigNotCompiledError";
  constructor(issues: readonly ConfigIssue[]) {
    super("KW_CONFIG_INVALID", `the config does not compile: ${issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join("; ")}`);
  }
}

/**
 * The compile of a config built in code (tests, benchmarks, the demo): the loader compiles
 * what it loads and hands that on, so the daemon and the commands are given it instead.
 */
export function compiledOf(config: Config): CompiledConfig {
  const { compiled, issues } = compileConfig(config);
  if (issues.length > 0) throw new ConfigNotCompiledError(issues);
  return compiled;
}
