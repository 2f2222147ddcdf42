import type { Config } from "../config/types.js";
import type { TokenInfo } from "../chain/token-info.js";
import { parseBalanceCondition } from "../rules/balance-condition.js";
import { DEFAULT_CLEAR_AFTER, type BalanceWatchInput } from "./balance-monitor.js";

/**
 * The balance watches of a config with their rules compiled against the tokens' decimals
 * and symbols (readConfigTokens has checked them: a failure here is a wiring mistake).
 * Watches no rule reads are left out: they would spend RPC calls for nothing.
 */
export function balanceWatchesOf(config: Config, tokens: ReadonlyMap<string, TokenInfo>): BalanceWatchInput[] {
  const watches: BalanceWatchInput[] = [];
  for (const watch of config.watches) {
    if (watch.kind !== "balance") continue;
    const infos = watch.tokens.flatMap((token) => tokens.get(token) ?? []);
    const rules = config.rules
      .filter((rule) => rule.watch === watch.name && rule.source === "balances")
      .map((rule) => {
        const parsed = parseBalanceCondition(rule.when, infos, watch.tokens.length);
        if (!parsed.ok) throw new Error(`rule ${rule.name}: ${parsed.issues.map((i) => i.message).join("; ")}`);
        return {
          name: rule.name,
          notify: rule.notify,
          clearAfter: rule.clear_after ?? DEFAULT_CLEAR_AFTER,
          condition: parsed.condition,
          ...(rule.summary === undefined ? {} : { summary: rule.summary }),
          ...(rule.severity === undefined ? {} : { severity: rule.severity }),
          labels: rule.labels,
        };
      });
    if (rules.length > 0) watches.push({ name: watch.name, schedule: watch.schedule, addresses: watch.balance, rules });
  }
  return watches;
}
