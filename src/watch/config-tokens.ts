import { KaiawatchError } from "../common/errors.js";
import type { Config } from "../config/types.js";
import type { ConfigIssue } from "../config/errors.js";
import type { Common } from "../common/common.js";
import { createJsonRpc } from "../chain/json-rpc.js";
import { NotATokenError, createTokenInfoCache, type TokenInfo, type TokenInfoCache } from "../chain/token-info.js";
import { compileTokenRules, type CompiledConfig } from "../config/compile-config.js";
import { rpcOptionsOf } from "./rpc-options.js";

/**
 * A token of a token watch is not a KIP-7 token, or a rule's amount does not fit a token
 * (a symbol that is not the token's, a fraction finer than its decimals). A config error
 * (exit 2), found by `validate` and at start-up because it needs the chain; each problem
 * has its key path, which the commands turn into file:line:column (locateConfigIssues).
 */
export class TokenConfigError extends KaiawatchError {
  override name = "TokenConfigError";
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super("KW_CONFIG_INVALID", `the token watches do not fit their tokens:\n${issues.map(issueLine).join("\n")}`);
    this.issues = issues;
  }

  /** "rules[2].when.amount.gte: …", one per problem. */
  get problems(): string[] {
    return this.issues.map(issueLine);
  }
}

function issueLine(issue: ConfigIssue): string {
  return `${issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")}: ${issue.message}`;
}

/**
 * Reads the decimals and symbol of every token of the config's token watches (through the
 * cache, concurrently: the JSON-RPC client's rate limit paces them), then compiles each token
 * rule's amounts in each of its tokens (compileTokenRules). Every problem at once, then one
 * error. Transport failures (the node unreachable) pass through as they are: they say
 * nothing of the config.
 */
export async function readConfigTokens(config: Config, compiled: CompiledConfig, cache: TokenInfoCache, signal?: AbortSignal): Promise<CompiledConfig> {
  const wanted: Array<{ token: string; path: string }> = [];
  config.watches.forEach((watch, w) => {
    if (watch.kind !== "account" && watch.kind !== "accounts" && watch.kind !== "balance") return;
    watch.tokens.forEach((token, t) => wanted.push({ token, path: `watches[${w}].tokens[${t}]` }));
  });
  if (wanted.length === 0) return compiled;
  const tokens = new Map<string, TokenInfo>();
  const problems: ConfigIssue[] = [];
  const notTokens = new Set<string>();
  const results = await Promise.allSettled(wanted.map(({ token }) => cache.get(token, signal)));
  results.forEach((result, i) => {
    const { token, path } = wanted[i] as (typeof wanted)[number];
    if (result.status === "fulfilled") tokens.set(token, result.value);
    else if (result.reason instanceof NotATokenError) {
      problems.push({ path: pathOf(path), message: result.reason.message });
      notTokens.add(token);
    } else throw result.reason;
  });
  // Every problem in one run: the rules of watches whose tokens are all tokens are compiled
  // too (a watch with a contract that is not a token has nothing to check its amounts against).
  const withTokens = compileTokenRules(config, compiled, tokens, notTokens);
  problems.push(...withTokens.issues);
  if (problems.length > 0) throw new TokenConfigError(problems);
  return withTokens.compiled;
}

/** "watches[1].tokens[0]" as a key path. */
function pathOf(text: string): Array<string | number> {
  return [...text.matchAll(/([A-Za-z_]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? (m[1] as string) : Number(m[2])));
}

/** readConfigTokens for a one-off command (replay): its own JSON-RPC client, only when a watch has tokens. */
export async function readConfigTokensOnce(common: Common, config: Config, compiled: CompiledConfig, signal?: AbortSignal): Promise<CompiledConfig> {
  if (!config.watches.some((watch) => (watch.kind === "account" || watch.kind === "accounts" || watch.kind === "balance") && watch.tokens.length > 0)) return compiled;
  const rpc = createJsonRpc(common, rpcOptionsOf(config));
  try {
    return await readConfigTokens(config, compiled, createTokenInfoCache(rpc), signal);
  } finally {
    await rpc.close();
  }
}
