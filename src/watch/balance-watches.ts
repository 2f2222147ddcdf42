import type { Config } from "../config/types.js";
import type { CompiledConfig } from "../config/compile-config.js";
import { DEFAULT_CLEAR_AFTER, type BalanceWatchInput } from "./balance-monitor.js";

/**
 * The balance watches of a config with their compiled rules and schedules (readConfigTokens
 * has compiled their token amounts in the tokens' decimals and symbols).
 * Watches no rule reads are left out: they would spend RPC calls for nothing.
 */
export function balanceWatchesOf(config: Config, compiled: CompiledConfig): BalanceWatchInput[] {
  const watches: BalanceWatchInput[] = [];
  for (const watch of config.watches) {
    if (watch.kind !== "balance") continue;
    const rules = config.rules
      .filter((rule) => rule.watch === watch.name && rule.source === "balances")
      .map((rule) => {
        const condition = compiled.rules.get(rule.name)?.balance;
        if (condition === undefined) throw new Error(`rule ${rule.name} is not in the config's compile`);
        return {
          name: rule.name,
          notify: rule.notify,
          clearAfter: rule.clear_after ?? DEFAULT_CLEAR_AFTER,
          condition,
          ...(rule.summary === undefined ? {} : { summary: rule.summary }),
          ...(rule.severity === undefined ? {} : { severity: rule.severity }),
          labels: rule.labels,
        };
      });
    const schedule = compiled.schedules.get(watch.schedule);
    if (schedule === undefined) throw new Error(`schedule "${watch.schedule}" is not in the config's compile`);
    if (rules.length > 0) watches.push({ name: watch.name, schedule, addresses: watch.balance, rules });
  }
  return watches;
}
