import type { WatchConfig } from "./types.js";

const cache = new WeakMap<WatchConfig, ReadonlySet<string>>();

/**
 * The accounts a watch's `direction` and alerts are relative to, lowercase: an account
 * watch's one, an accounts watch's list; undefined for the other kinds. One set per watch,
 * shared by all its rules (an accounts watch may list 100,000).
 */
export function watchedAccountsOf(watch: WatchConfig): ReadonlySet<string> | undefined {
  if (watch.kind !== "account" && watch.kind !== "accounts") return undefined;
  let accounts = cache.get(watch);
  if (accounts === undefined) cache.set(watch, (accounts = new Set(watch.kind === "account" ? [watch.account.toLowerCase()] : watch.accounts)));
  return accounts;
}
