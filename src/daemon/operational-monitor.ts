import { resolvedAlertId } from "../model/alert-status.js";
import type { Common } from "../common/common.js";
import { ALERT_DOCUMENT_VERSION, OPERATIONAL_ALERT_SOURCE, type AlertDocument } from "../model/alert-document.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import { alertId } from "../rules/build-alert.js";
import type { Store } from "../store/types.js";

/** The rule name of kaiawatch's condition alerts (firing and resolved). */
export const OPERATIONAL_RULE = "kaiawatch.operational";
/** Store meta key: the episodes firing now (survives restarts, so a restart repeats nothing). */
export const OPERATIONAL_EPISODES_META_KEY = "operational_episodes";

/** A condition that holds now. `key` names it stably (e.g. `source_failing:src_…`). */
export interface OperationalCondition {
  key: string;
  kind: string;
  summary: string;
  detail: Record<string, unknown>;
}

/** A condition's episode: from the check that first saw it to the one that saw it gone. */
export interface Episode {
  /** The firing alert's id; the resolved alert's is `${id}:resolved`. */
  id: string;
  key: string;
  kind: string;
  since: string;
  summary: string;
}

export interface OperationalMonitorOptions {
  store: Store;
  /** Sinks marked `operational: true`. */
  sinks: readonly string[];
  network: string;
  head: () => number | null;
  /** Wakes the dispatcher after an alert entered the outbox. */
  onQueued: () => void;
}

export interface OperationalMonitor {
  /** Compares the conditions holding now with the episodes firing, and sends what changed. */
  update(conditions: readonly OperationalCondition[]): Promise<void>;
  /** The episodes firing now. */
  active(): Episode[];
}

/**
 * kaiawatch's alerts about itself, each sent once when its condition starts and once when it
 * clears, to the sinks marked `operational: true` (through the outbox: durable and retried)
 * and to the log. An episode is written to the store before its firing alert is queued, and
 * its firing alert's id is derived from the condition and the episode's start: after a crash
 * in between, the next start queues it again under the same id, which the outbox ignores when
 * it already holds it. A resolved alert is queued before the episode is removed, for the same
 * reason. So a restart repeats nothing, and loses nothing.
 */
export async function createOperationalMonitor(common: Common, options: OperationalMonitorOptions): Promise<OperationalMonitor> {
  const { store } = options;
  const logger = common.logger.child({ component: "operational" });
  let episodes: Record<string, Episode> = { ...((await store.getMeta<Record<string, Episode>>(OPERATIONAL_EPISODES_META_KEY)) ?? {}) };
  let resumed = false;
  let queue: Promise<void> = Promise.resolve();

  function documentOf(episode: Episode, status: "firing" | "resolved", detail: Record<string, unknown>, now: Date): AlertDocument {
    const summary = status === "firing" ? `kaiawatch: ${episode.summary}` : `kaiawatch: resolved: ${episode.summary}`;
    return {
      version: ALERT_DOCUMENT_VERSION,
      id: status === "firing" ? episode.id : resolvedAlertId(episode.id),
      rule: OPERATIONAL_RULE,
      watch: OPERATIONAL_ALERT_SOURCE,
      source: OPERATIONAL_ALERT_SOURCE,
      network: options.network,
      block: options.head() ?? 0,
      transaction_hash: null,
      datetime: now.toISOString(),
      summary,
      links: {},
      record: { kind: episode.kind, condition: episode.key, since: episode.since, ...(status === "resolved" ? { resolved_at: now.toISOString() } : {}), ...detail },
      created_at: now.toISOString(),
      status,
    };
  }

  async function send(alert: AlertDocument): Promise<void> {
    if (options.sinks.length === 0) return;
    const { added } = await store.enqueue(newOutboxEntries(alert, options.sinks, new Date(common.now())));
    if (added > 0) options.onQueued();
  }

  async function update(conditions: readonly OperationalCondition[]): Promise<void> {
    const now = new Date(common.now());
    if (!resumed) {
      // Episodes of an earlier run: their firing alert may not have reached the outbox.
      resumed = true;
      for (const episode of Object.values(episodes)) await send(documentOf(episode, "firing", {}, new Date(episode.since)));
    }
    const holding = new Map(conditions.map((condition) => [condition.key, condition]));
    for (const condition of holding.values()) {
      if (episodes[condition.key] !== undefined) continue;
      const since = now.toISOString();
      const episode: Episode = { id: alertId(OPERATIONAL_RULE, `${condition.key}@${since}`), key: condition.key, kind: condition.kind, since, summary: condition.summary };
      // Logged first: when the store is what is failing, the log is the only place it goes.
      if (options.sinks.length === 0) logger.warn({ kind: episode.kind, condition: episode.key, alert_id: episode.id }, `${episode.summary} (no sink is marked operational: true; only logged)`);
      else logger.warn({ kind: episode.kind, condition: episode.key, alert_id: episode.id, ...condition.detail }, episode.summary);
      await store.setMeta(OPERATIONAL_EPISODES_META_KEY, { ...episodes, [condition.key]: episode });
      episodes = { ...episodes, [condition.key]: episode };
      await send(documentOf(episode, "firing", condition.detail, now));
    }
    for (const episode of Object.values(episodes)) {
      if (holding.has(episode.key)) continue;
      await send(documentOf(episode, "resolved", {}, now));
      const { [episode.key]: _gone, ...rest } = episodes;
      episodes = rest;
      await store.setMeta(OPERATIONAL_EPISODES_META_KEY, episodes);
      logger.info({ kind: episode.kind, condition: episode.key, alert_id: resolvedAlertId(episode.id), since: episode.since }, `resolved: ${episode.summary}`);
    }
  }

  return {
    // One update at a time: two overlapping ones could both open the same episode.
    update(conditions) {
      const run = queue.then(() => update(conditions));
      queue = run.catch(() => undefined);
      return run;
    },
    active: () => Object.values(episodes),
  };
}
