import { z } from "zod";
import { metaSlot, readMeta, writeMeta } from "../store/meta-slot.js";
import { reminderAlertId, resolvedAlertId, type RepeatIntervalOf } from "../model/alert-status.js";
import type { Schedule } from "../config/schedule.js";
import type { Common } from "../common/common.js";
import { describeError, isAbortError } from "../common/errors.js";
import { readBalance, readTokenBalance } from "../chain/chain-reads.js";
import type { JsonRpc } from "../chain/json-rpc.js";
import type { TokenInfo } from "../chain/token-info.js";
import { formatKei } from "../chain/units.js";
import { formatTokenAmount } from "../chain/token-amounts.js";
import { ALERT_DOCUMENT_VERSION, BALANCE_ALERT_SOURCE, type AlertDocument, type AlertSeverity } from "../model/alert-document.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import { alertId, shortAddress } from "../rules/build-alert.js";
import { balanceTemplateValue, renderTemplate } from "../rules/summary-template.js";
import { tokenSymbolText } from "../rules/token-symbol.js";
import { isStoreError } from "../store/errors.js";
import type { Ownership } from "../store/ownership.js";
import { leaseResource, type LeaseResource } from "../store/resources.js";
import type { BalanceEpisode, BalanceEpisodeChange, Store } from "../store/types.js";
import type { BalanceCondition } from "../rules/balance-condition.js";
import { alertLabels } from "../notify/labels.js";

/** Readings in a row without the condition before an alert resolves, unless the rule says. */
export const DEFAULT_CLEAR_AFTER = 2;

export interface BalanceRuleInput {
  name: string;
  notify: readonly string[];
  clearAfter: number;
  condition: BalanceCondition;
  /** The rule's `summary` template (see BALANCE_TEMPLATE_VARIABLES); absent: the default line. */
  summary?: string;
  severity?: AlertSeverity;
  /** The rule's own `labels:` (the alert adds rule, watch, source and severity). */
  labels?: Readonly<Record<string, string>>;
}

export interface BalanceWatchInput {
  name: string;
  schedule: Schedule;
  /** Lowercase. */
  addresses: readonly string[];
  rules: readonly BalanceRuleInput[];
}

/** The lease a replica holds to read a balance watch and write its rules' episodes. */
export function balanceResource(watch: string): LeaseResource {
  return leaseResource({ balance: watch });
}

const balanceReading = z.object({
  block: z.number(),
  at: z.string(),
  replica: z.string(),
  balances: z.array(z.object({ address: z.string(), asset: z.string(), symbol: z.string(), balance: z.string(), balance_base_units: z.string() })),
});

/** A balance watch's last reading, as /status shows it: its block, time, reader and the balances it read. */
export type BalanceReading = z.infer<typeof balanceReading>;

/** The last reading of one balance watch, in the store: /status on every replica shows it, whichever read it. */
export function balanceReadingSlot(watch: string) {
  return metaSlot<BalanceReading>(`balance-reading.${watch}`, balanceReading);
}

export interface BalanceMonitorOptions {
  rpc: JsonRpc;
  store: Store;
  /** Who reads each watch: this process alone, or the replica holding its lease (balanceResource). */
  ownership: Ownership;
  watches: readonly BalanceWatchInput[];
  tokens: ReadonlyMap<string, TokenInfo>;
  network: string;
  explorerUrl: string;
  /** The block balances are read at (the chain head). */
  readHead: (signal: AbortSignal) => Promise<number>;
  /** Wakes the dispatcher after alerts entered the outbox. */
  onQueued: () => void;
  /** When a firing episode is reminded of (its rule's `repeat_interval`); absent: never. */
  repeatInterval?: RepeatIntervalOf;
}

export interface BalanceMonitor {
  /** Schedules the watches; each reading is made by the holder of the watch's lease only. */
  start(): Promise<void>;
  /** One reading of every balance watch this process holds now (`once`, tests). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

const episodeKey = (rule: string, address: string, asset: string) => `${rule}|${address}|${asset}`;

/**
 * Balance watches: on each watch's schedule, reads the KAIA and token balances of its
 * addresses at the head by JSON-RPC and runs each rule's condition on them. A rule fires
 * when its condition starts to hold for an (address, asset), and resolves once it has not
 * held for `clear_after` readings in a row: one alert per episode, not one per reading.
 *
 * Replicas: a watch is read by the replica holding its lease (`balance:<watch>`), handed
 * over on failover and on reload like a source's, so the RPC reads are not multiplied by
 * the replicas. The episodes are rows of the store, one per (rule, address, asset), written
 * with the alerts they decide in one compare-and-set write fenced by the lease's epoch: a
 * replica that lost the lease, or read an episode another has changed since, writes nothing,
 * so an episode fires once and resolves once under one id through restarts, reloads and
 * failover. The id is decided once, by the write that opens the episode.
 *
 * Reminders: a firing episode whose rule has a `repeat_interval` is sent again, with the
 * reading of the moment, under its own id of the episode's family and its count (see
 * reminderDue); the count and time are columns of the episode's row, written with the
 * reminder's outbox entries in the same fenced compare-and-set, so a reminder is sent once
 * however many replicas and restarts, and never after the resolve (which closes the row).
 */
export function createBalanceMonitor(common: Common, options: BalanceMonitorOptions): BalanceMonitor {
  const logger = common.logger.child({ component: "balances" });
  const { store, ownership } = options;
  const metrics = common.metrics;
  const abort = new AbortController();
  const crons: Array<{ stop(): void }> = [];
  let chain: Promise<void> = Promise.resolve();

  const describe = (asset: string, units: bigint) => describeAsset(options.tokens, asset, units);
  const buildBalanceAlert = (input: BalanceAlertInput) => balanceAlert(options, common.now(), input);

  /** What this replica's metrics say of a watch it does not hold: only that (the holder's say the rest). */
  function notHeld(watch: BalanceWatchInput): void {
    metrics.balanceWatchHeld.set({ watch: watch.name }, 0);
    metrics.balanceReadBlock.remove({ watch: watch.name });
    metrics.balanceReadTime.remove({ watch: watch.name });
    for (const rule of watch.rules) metrics.balanceRuleFiring.remove({ rule: rule.name });
  }

  /**
   * The counter of the reminder a reading of a firing episode sends now, if one is due: its
   * `repeat_interval` has passed since the episode's last firing alert (the first or the last
   * reminder). Decided at readings, so a reminder comes at the first reading at or after it
   * is due (the watch's schedule is the granularity), and only at a reading where the
   * condition holds: one on its way to resolving is not reminded of.
   */
  function reminderDue(episode: BalanceEpisode): number | undefined {
    const interval = options.repeatInterval?.(episode.alert);
    if (interval === undefined || interval <= 0) return undefined;
    const last = Date.parse(episode.reminded_at ?? episode.alert.created_at);
    if (!Number.isFinite(last) || common.now() - last < interval) return undefined;
    return episode.repeats + 1;
  }

  /** The watch's rules' episodes after a reading: decided from the stored ones, changed only where they change. */
  function decide(watch: BalanceWatchInput, block: number, balances: ReadonlyMap<string, bigint>, stored: ReadonlyMap<string, BalanceEpisode>) {
    const changes: BalanceEpisodeChange[] = [];
    const alerts: Array<{ alert: AlertDocument; sinks: readonly string[] }> = [];
    for (const rule of watch.rules) {
      for (const address of watch.addresses) {
        if (rule.condition.addresses !== undefined && !rule.condition.addresses.has(address)) continue;
        for (const test of rule.condition.tests) {
          const units = balances.get(`${address}|${test.asset}`) as bigint;
          const where = { rule: rule.name, address, asset: test.asset };
          const episode = stored.get(episodeKey(rule.name, address, test.asset));
          const holds = test.holds(units);
          const build = (status: "firing" | "resolved", id: string, episodeId: string, repeat?: number) =>
            buildBalanceAlert({ rule, watch: watch.name, address, asset: test.asset, units, block, condition: test.text, status, id, episodeId, ...(repeat === undefined ? {} : { repeat }) });
          if (episode === undefined) {
            if (!holds) continue;
            // The block makes the id of each episode new; the write that opens it fixes it for good.
            const id = alertId(rule.name, `balance:${address}:${test.asset}:${block}`);
            const alert = build("firing", id, id, 0);
            changes.push({ ...where, expect: null, next: { alert, clear: 0, repeats: 0, reminded_at: null } });
            alerts.push({ alert, sinks: rule.notify });
          } else if (holds) {
            const carried = { repeats: episode.repeats, reminded_at: episode.reminded_at };
            const reminder = reminderDue(episode);
            if (reminder !== undefined) {
              // The reading as it is now, under the episode's id family; the count and time go in the same write.
              const alert = build("firing", reminderAlertId(episode.alert.id, reminder), episode.alert.id, reminder);
              changes.push({ ...where, expect: episode.alert.id, next: { alert: episode.alert, clear: 0, repeats: reminder, reminded_at: alert.created_at } });
              alerts.push({ alert, sinks: rule.notify });
            } else if (episode.clear !== 0) changes.push({ ...where, expect: episode.alert.id, next: { alert: episode.alert, clear: 0, ...carried } });
          } else if (episode.clear + 1 < rule.clearAfter) {
            changes.push({ ...where, expect: episode.alert.id, next: { alert: episode.alert, clear: episode.clear + 1, repeats: episode.repeats, reminded_at: episode.reminded_at } });
          } else {
            const alert = build("resolved", resolvedAlertId(episode.alert.id), episode.alert.id);
            changes.push({ ...where, expect: episode.alert.id, next: null });
            alerts.push({ alert, sinks: rule.notify });
          }
        }
      }
    }
    return { changes, alerts };
  }

  async function readWatch(watch: BalanceWatchInput): Promise<void> {
    const resource = balanceResource(watch.name);
    const lease = ownership.use(resource);
    if (lease === undefined) return notHeld(watch);
    try {
      metrics.balanceWatchHeld.set({ watch: watch.name }, 1);
      // The lease's signal stops the reads the moment another replica may take the watch over.
      const signal = lease.signal === undefined ? abort.signal : AbortSignal.any([abort.signal, lease.signal]);
      const block = await options.readHead(signal);
      const assets = new Set<string>(watch.rules.flatMap((rule) => rule.condition.tests.map((t) => t.asset)));
      const balances = new Map<string, bigint>();
      for (const address of watch.addresses) {
        for (const asset of assets) {
          const units = asset === "KAIA" ? await readBalance(options.rpc, address, block, signal) : await readTokenBalance(options.rpc, asset, address, block, signal);
          metrics.balanceReads.inc({ watch: watch.name });
          balances.set(`${address}|${asset}`, units);
        }
      }
      const rules = new Set(watch.rules.map((rule) => rule.name));
      const stored = new Map((await store.listBalanceEpisodes()).filter((e) => rules.has(e.rule)).map((e) => [episodeKey(e.rule, e.address, e.asset), e]));
      const { changes, alerts } = decide(watch, block, balances, stored);
      if (changes.length > 0) {
        const now = new Date(common.now());
        const entries = alerts.flatMap(({ alert, sinks }) => newOutboxEntries(alert, sinks, now));
        await store.commitBalanceEpisodes({ changes, entries, ...(lease.epoch === undefined ? {} : { lease: { resource, epoch: lease.epoch } }) });
        for (const { alert } of alerts) logger.info({ watch: watch.name, rule: alert.rule, status: alert.status, id: alert.id, ...(alert.repeat ? { repeat: alert.repeat } : {}) }, alert.summary);
        if (entries.length > 0) options.onQueued();
      }
      const at = new Date(common.now());
      metrics.balanceReadBlock.set({ watch: watch.name }, block);
      metrics.balanceReadTime.set({ watch: watch.name }, at.getTime() / 1000);
      const open = new Map<string, number>();
      for (const episode of stored.values()) open.set(episode.rule, (open.get(episode.rule) ?? 0) + 1);
      for (const change of changes) {
        if (change.expect === null && change.next !== null) open.set(change.rule, (open.get(change.rule) ?? 0) + 1);
        if (change.expect !== null && change.next === null) open.set(change.rule, (open.get(change.rule) ?? 1) - 1);
      }
      for (const rule of watch.rules) metrics.balanceRuleFiring.set({ rule: rule.name }, open.get(rule.name) ?? 0);
      await writeMeta(store, balanceReadingSlot(watch.name), {
        block,
        at: at.toISOString(),
        replica: ownership.replicaId,
        balances: [...balances].map(([key, units]) => {
          const [address, asset] = key.split("|") as [string, string];
          const { symbol, decimals } = describe(asset, units);
          return { address, asset, symbol, balance: formatTokenAmount(units, decimals), balance_base_units: units.toString() };
        }),
      });
    } finally {
      lease.done();
    }
  }

  /** One watch's reading, after the previous one (one reading at a time per process). */
  function run(watch: BalanceWatchInput): Promise<void> {
    const next = chain.then(() => readWatch(watch));
    chain = next.catch((error: unknown) => {
      if (isAbortError(error) || isStoreError(error, "KW_STORE_LEASE_LOST")) return;
      if (isStoreError(error, "KW_STORE_EPISODE_CONFLICT")) logger.warn({ watch: watch.name, err: describeError(error) }, "another writer changed this watch's episodes meanwhile: nothing was written; the next reading goes on from theirs");
      else logger.warn({ watch: watch.name, err: describeError(error) }, "cannot read the balances of this watch; the next reading tries again");
    });
    return next;
  }

  return {
    async start() {
      for (const watch of options.watches) {
        crons.push(watch.schedule.start(() => run(watch).catch(() => undefined), { protect: true }));
      }
    },
    async runOnce() {
      for (const watch of options.watches) await run(watch);
    },
    async stop() {
      for (const cron of crons.splice(0)) cron.stop();
      abort.abort();
      await chain;
    },
  };
}

/** An asset's balance as text, with the symbol and decimals it is written in. */
function describeAsset(tokens: ReadonlyMap<string, TokenInfo>, asset: string, units: bigint): { text: string; symbol: string; decimals: number } {
  if (asset === "KAIA") return { text: `${formatKei(units, { group: true })} KAIA`, symbol: "KAIA", decimals: 18 };
  const token = tokens.get(asset);
  const decimals = token?.decimals ?? 0;
  // The same symbol text as a token transfer's alert (token-symbol.ts), so one token reads the same in both.
  const symbol = tokenSymbolText(token?.symbol);
  return { text: `${formatTokenAmount(units, decimals, { group: true })} ${symbol} (${shortAddress(asset)})`, symbol, decimals };
}

interface BalanceAlertInput {
rule: BalanceRuleInput;
watch: string;
address: string;
asset: string;
units: bigint;
block: number;
condition: string;
status: "firing" | "resolved";
id: string;
/** The episode's id (its first firing alert's). */
episodeId: string;
/** Firing alerts: 0 for the first, n for the n-th reminder. */
repeat?: number;
}

/** A balance rule's firing or resolved alert. */
function balanceAlert(options: Pick<BalanceMonitorOptions, "tokens" | "network" | "explorerUrl">, now: number, input: BalanceAlertInput): AlertDocument {
  const base = options.explorerUrl.replace(/\/+$/, "");
  const { text, symbol, decimals } = describeAsset(options.tokens, input.asset, input.units);
  const fallback =
    input.status === "firing"
      ? `balance of ${shortAddress(input.address)} is ${text}: ${input.condition}`
      : `resolved: balance of ${shortAddress(input.address)} is ${text}, no longer ${input.condition}`;
  const alert: AlertDocument = {
    version: ALERT_DOCUMENT_VERSION,
    id: input.id,
    rule: input.rule.name,
    watch: input.watch,
    source: BALANCE_ALERT_SOURCE,
    network: options.network,
    block: input.block,
    transaction_hash: null,
    datetime: null,
    summary: fallback,
    links: { block: `${base}/block/${input.block}`, account: `${base}/account/${encodeURIComponent(input.address)}`, ...(input.asset === "KAIA" ? {} : { token: `${base}/token/${encodeURIComponent(input.asset)}` }) },
    record: {
      address: input.address,
      asset: input.asset,
      symbol,
      decimals,
      balance: formatTokenAmount(input.units, decimals),
      balance_base_units: input.units.toString(),
      condition: input.condition,
    },
    status: input.status,
    episode_id: input.episodeId,
    ...(input.repeat === undefined ? {} : { repeat: input.repeat }),
    ...(input.rule.severity === undefined ? {} : { severity: input.rule.severity }),
    labels: alertLabels({ rule: input.rule.name, watch: input.watch, source: BALANCE_ALERT_SOURCE, severity: input.rule.severity, labels: input.rule.labels }),
    created_at: new Date(now).toISOString(),
  };
  // The rule's template sees the default line as {{summary}}; the symbol in it is the flattened, cut one.
  const template = input.rule.summary;
  return template === undefined ? alert : { ...alert, summary: renderTemplate(template, (name) => balanceTemplateValue(name, alert)) };
}

/** The last reading of each watch, as the store has it (any replica's). */
export async function lastBalanceReadings(store: Store, watches: readonly string[]): Promise<Map<string, BalanceReading>> {
  const readings = new Map<string, BalanceReading>();
  for (const watch of watches) {
    const reading = await readMeta(store, balanceReadingSlot(watch));
    if (reading !== undefined) readings.set(watch, reading);
  }
  return readings;
}
