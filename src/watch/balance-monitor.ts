import { z } from "zod";
import { metaSlot, readMeta, writeMeta } from "../store/meta-slot.js";
import { resolvedAlertId } from "../model/alert-status.js";
import { Cron } from "croner";
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
import { truncate } from "../common/text.js";
import { balanceTemplateValue, oneLine, renderTemplate } from "../rules/summary-template.js";
import type { Store } from "../store/types.js";
import type { BalanceCondition } from "../rules/balance-condition.js";

/** The store meta key of the balance rules' episodes (and of alerts written but maybe not yet queued). */

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
}

export interface BalanceWatchInput {
  name: string;
  schedule: string;
  /** Lowercase. */
  addresses: readonly string[];
  rules: readonly BalanceRuleInput[];
}

/** One episode of one (rule, address, asset): firing since `block`, or quiet. */
interface Episode {
  /** The firing alert while the condition holds (its id is the episode's id). */
  firing?: AlertDocument;
  /** Readings in a row where the condition did not hold, while firing. */
  clear: number;
}

interface SavedEpisodes {
  episodes: Record<string, Episode>;
  /** Alerts decided and saved with the episodes, not yet known to be in the outbox: queued again at start. */
  pending: Array<{ alert: AlertDocument; sinks: readonly string[] }>;
}

const alertDocument = z.custom<AlertDocument>((value) => typeof value === "object" && value !== null && !Array.isArray(value));

/** The balance rules' episodes and the alerts decided with them, saved so that a restart goes on with them. */
export const BALANCE_EPISODES = metaSlot<SavedEpisodes>(
  "balance-episodes",
  z.object({
    episodes: z.record(z.string(), z.object({ firing: alertDocument.optional(), clear: z.number() })),
    pending: z.array(z.object({ alert: alertDocument, sinks: z.array(z.string()) })),
  }),
);

export interface BalanceMonitorOptions {
  rpc: JsonRpc;
  store: Store;
  watches: readonly BalanceWatchInput[];
  tokens: ReadonlyMap<string, TokenInfo>;
  network: string;
  explorerUrl: string;
  /** The block balances are read at (the chain head). */
  readHead: (signal: AbortSignal) => Promise<number>;
  /** Wakes the dispatcher after alerts entered the outbox. */
  onQueued: () => void;
}

export interface BalanceMonitor {
  /** Queues alerts a crash left between the episode write and the outbox; then schedules the watches. */
  start(): Promise<void>;
  /** One reading of every balance watch now (`once`, tests). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Balance watches: on each watch's schedule, reads the KAIA and token balances of its
 * addresses at the head by JSON-RPC and runs each rule's condition on them. A rule fires
 * when its condition starts to hold for an (address, asset), and resolves once it has not
 * held for `clear_after` readings in a row: one alert per episode, not one per reading.
 *
 * Episodes live in the store's meta, so a restart continues them. The alerts a reading
 * decides are saved with the episodes first and queued after (the outbox drops an id it
 * has), so a crash between the two writes queues them at the next start: never lost, never
 * a second episode.
 */
export function createBalanceMonitor(common: Common, options: BalanceMonitorOptions): BalanceMonitor {
  const logger = common.logger.child({ component: "balances" });
  const { store } = options;
  const abort = new AbortController();
  const crons: Cron[] = [];
  let chain: Promise<void> = Promise.resolve();

  const load = async (): Promise<SavedEpisodes> => (await readMeta(store, BALANCE_EPISODES)) ?? { episodes: {}, pending: [] };

  async function queue(saved: SavedEpisodes): Promise<void> {
    if (saved.pending.length === 0) return;
    const now = new Date(common.now());
    await store.enqueue(saved.pending.flatMap(({ alert, sinks }) => newOutboxEntries(alert, sinks, now)));
    await writeMeta(store, BALANCE_EPISODES, { episodes: saved.episodes, pending: [] });
    options.onQueued();
  }

  function describe(asset: string, units: bigint): { text: string; symbol: string; decimals: number } {
    if (asset === "KAIA") return { text: `${formatKei(units, { group: true })} KAIA`, symbol: "KAIA", decimals: 18 };
    const token = options.tokens.get(asset);
    const decimals = token?.decimals ?? 0;
    // Flattened and cut as in a token transfer's summary, so one token reads the same in both.
    const symbol = token?.symbol === undefined ? "tokens" : truncate(oneLine(token.symbol), 24);
    return { text: `${formatTokenAmount(units, decimals, { group: true })} ${symbol} (${shortAddress(asset)})`, symbol, decimals };
  }

  function buildBalanceAlert(input: { rule: BalanceRuleInput; watch: string; address: string; asset: string; units: bigint; block: number; condition: string; status: "firing" | "resolved"; id: string }): AlertDocument {
    const base = options.explorerUrl.replace(/\/+$/, "");
    const { text, symbol, decimals } = describe(input.asset, input.units);
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
      ...(input.rule.severity === undefined ? {} : { severity: input.rule.severity }),
      created_at: new Date(common.now()).toISOString(),
    };
    // The rule's template sees the default line as {{summary}}; the symbol in it is the flattened, cut one.
    const template = input.rule.summary;
    return template === undefined ? alert : { ...alert, summary: renderTemplate(template, (name) => balanceTemplateValue(name, alert)) };
  }

  async function readWatch(watch: BalanceWatchInput, signal: AbortSignal): Promise<void> {
    const block = await options.readHead(signal);
    const assets = new Set<string>(watch.rules.flatMap((rule) => rule.condition.tests.map((t) => t.asset)));
    const balances = new Map<string, bigint>();
    for (const address of watch.addresses) {
      for (const asset of assets) {
        const units = asset === "KAIA" ? await readBalance(options.rpc, address, block, signal) : await readTokenBalance(options.rpc, asset, address, block, signal);
        balances.set(`${address}|${asset}`, units);
      }
    }
    const saved = await load();
    const episodes = { ...saved.episodes };
    const pending = [...saved.pending];
    for (const rule of watch.rules) {
      for (const address of watch.addresses) {
        if (rule.condition.addresses !== undefined && !rule.condition.addresses.has(address)) continue;
        for (const test of rule.condition.tests) {
          const units = balances.get(`${address}|${test.asset}`) as bigint;
          const key = `${watch.name}|${rule.name}|${address}|${test.asset}`;
          const episode: Episode = episodes[key] ?? { clear: 0 };
          const holds = test.holds(units);
          if (episode.firing === undefined) {
            if (!holds) continue;
            const id = alertId(rule.name, `balance:${address}:${test.asset}:${block}`);
            const alert = buildBalanceAlert({ rule, watch: watch.name, address, asset: test.asset, units, block, condition: test.text, status: "firing", id });
            episodes[key] = { firing: alert, clear: 0 };
            pending.push({ alert, sinks: rule.notify });
          } else if (holds) {
            episodes[key] = { firing: episode.firing, clear: 0 };
          } else if (episode.clear + 1 < rule.clearAfter) {
            episodes[key] = { firing: episode.firing, clear: episode.clear + 1 };
          } else {
            const alert = buildBalanceAlert({ rule, watch: watch.name, address, asset: test.asset, units, block, condition: test.text, status: "resolved", id: resolvedAlertId(episode.firing.id) });
            delete episodes[key];
            pending.push({ alert, sinks: rule.notify });
          }
        }
      }
    }
    const next: SavedEpisodes = { episodes, pending };
    await writeMeta(store, BALANCE_EPISODES, next);
    for (const { alert } of pending.slice(saved.pending.length)) logger.info({ rule: alert.rule, status: alert.status, id: alert.id }, alert.summary);
    await queue(next);
  }

  /** One watch's reading, after the previous one: the episodes are one meta value, written in turn. */
  function run(watch: BalanceWatchInput): Promise<void> {
    const next = chain.then(() => readWatch(watch, abort.signal));
    chain = next.catch((error: unknown) => {
      if (!isAbortError(error)) logger.warn({ watch: watch.name, err: describeError(error) }, "cannot read the balances of this watch; the next reading tries again");
    });
    return next;
  }

  return {
    async start() {
      await queue(await load());
      for (const watch of options.watches) {
        crons.push(new Cron(watch.schedule, { timezone: "UTC", protect: true }, () => run(watch).catch(() => undefined)));
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
