import { z } from "zod";
import { metaSlot, readMeta, writeMeta } from "../store/meta-slot.js";
import { reminderAlertId, resolvedAlertId, type RepeatIntervalOf } from "../model/alert-status.js";
import type { Common } from "../common/common.js";
import { ALERT_DOCUMENT_VERSION, OPERATIONAL_ALERT_SOURCE, type AlertDocument } from "../model/alert-document.js";
import { newOutboxEntries, type OutboxEntry } from "../model/outbox-entry.js";
import { alertId } from "../rules/build-alert.js";
import type { Store } from "../store/types.js";
import { alertLabels, type Labels } from "../notify/labels.js";
import { matchRoutes, receiversOf, type Route } from "../notify/routes.js";

/** The rule name of kaiawatch's condition alerts (firing and resolved). */
export const OPERATIONAL_RULE = "kaiawatch.operational";
/** Store meta key: the episodes firing now (survives restarts, so a restart repeats nothing). */

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
  /** The condition's detail when it started (the firing alert's record carries it). */
  detail?: Record<string, unknown>;
  /** Set when the condition cleared; the episode is kept until its resolved alert is queued. */
  resolved_at?: string;
  /** Reminders decided so far (the last one's id is reminderAlertId(id, repeats)); absent: none. */
  repeats?: number;
  /** When the last reminder was decided; absent: none yet (the next is due from `since`). */
  reminded_at?: string;
}

/** The episodes open or not yet resolved in the outbox, by condition key: a restart goes on with them. */
export const OPERATIONAL_EPISODES = metaSlot<Record<string, Episode>>(
  "operational_episodes",
  z.record(
    z.string(),
    z.object({
      id: z.string(),
      key: z.string(),
      kind: z.string(),
      since: z.string(),
      summary: z.string(),
      detail: z.record(z.string(), z.unknown()).optional(),
      resolved_at: z.string().optional(),
      repeats: z.int().nonnegative().optional(),
      reminded_at: z.string().optional(),
    }),
  ),
);

export interface OperationalMonitorOptions {
  store: Store;
  /** Sinks marked `operational: true`. */
  sinks: readonly string[];
  /** The `routes:` tree: an operational alert also goes where it routes the alert's labels. */
  routes?: Route;
  network: string;
  head: () => number | null;
  /** Wakes the dispatcher after an alert entered the outbox. */
  onQueued: () => void;
  /**
   * Sends an alert to the operational sinks at once, not through the outbox (deliverDirectly):
   * for the conditions whose alert the outbox cannot carry (OUTBOX_CANNOT_CARRY).
   */
  sendDirectly?: (alert: AlertDocument) => Promise<void>;
  /** When a firing condition is reminded of (`operational.repeat_interval`); absent: never. */
  repeatInterval?: RepeatIntervalOf;
}

/**
 * Conditions whose alert the outbox cannot carry: a damaged store stops every write for good,
 * so its firing alert would wait in memory until a restart. It is sent directly instead,
 * best effort and once per process (sendDirectly); and while such a condition holds, nothing
 * is written (each write would fail, and the health check with it).
 */
export const OUTBOX_CANNOT_CARRY: ReadonlySet<string> = new Set(["store_corrupt"]);

export interface OperationalMonitor {
  /** Compares the conditions holding now with the episodes firing, and sends what changed. */
  update(conditions: readonly OperationalCondition[]): Promise<void>;
  /** The episodes firing now. */
  active(): Episode[];
  /**
   * The outbox entries of an alert about an event rather than a condition (a record one
   * reader of a `source: both` watch missed): sent once, never resolved. Its id comes from
   * the event's key alone, so the same event reported again (by another replica, or after a
   * restart) is the same alert. None when no sink is marked operational or routed to.
   */
  eventEntries(event: OperationalCondition): OutboxEntry[];
  /**
   * Forgets the episodes in memory and reads those the store holds, as at a start (their
   * firing alerts queued again under their ids: the outbox keeps one). With replicas, when
   * this replica takes over sending from another (HealthMonitor.resume()).
   */
  reload(): Promise<void>;
}

/**
 * kaiawatch's alerts about itself, each sent once when its condition starts and once when it
 * clears, to the sinks marked `operational: true` (through the outbox: durable and retried)
 * and to the log. An episode is written to the store before its firing alert is queued, and
 * its firing alert's id is derived from the condition and the episode's start: after a crash
 * in between, the next start queues it again under the same id, which the outbox ignores when
 * it already holds it. A cleared episode is marked resolved in the store, its resolved alert
 * queued, and only then is it removed, for the same reason. So a restart repeats nothing, and
 * loses nothing.
 *
 * The episodes live in memory first and are logged at once; what the store has not taken yet
 * (it may be the store that is failing: `store_not_writable`) is written at the next update.
 * So a store that fails and recovers is logged when it starts and when it clears, and its
 * firing and resolved alerts reach the sinks once the store takes writes again. A store that
 * is damaged takes no write again: that alert goes to the sinks directly (OUTBOX_CANNOT_CARRY).
 *
 * With `operational.repeat_interval`, a condition still holding is reminded of every
 * interval (remindIfDue), by the same replica that sends its firing and resolved alerts.
 */
export async function createOperationalMonitor(common: Common, options: OperationalMonitorOptions): Promise<OperationalMonitor> {
  const { store } = options;
  const logger = common.logger.child({ component: "operational" });
  // Conditions quote error texts (an explorer's 401 quoting the key, a node's 404 quoting its
  // URL): scrubbed as they come in, and episodes as they are read (an earlier release stored
  // them as they came), this monitor being the one door to the episodes it stores, the
  // alerts it queues or sends directly, and its log lines.
  const stored = async () => Object.entries(common.secrets.redactDeep((await readMeta(store, OPERATIONAL_EPISODES)) ?? {}));
  const episodes = new Map(await stored());
  // Episodes of an earlier run: their firing alert may not have reached the outbox (queued again, the outbox keeps one).
  const unqueued = new Set(episodes.keys());
  // Likewise their last reminder, decided and saved before it was queued.
  const unreminded = new Set([...episodes.values()].filter((episode) => (episode.repeats ?? 0) > 0).map((episode) => episode.key));
  let unsaved = false;
  let queue: Promise<void> = Promise.resolve();
  // The conditions whose alert went directly in this process (OUTBOX_CANNOT_CARRY): once each.
  const sentDirectly = new Set<string>();

  /** The episode's firing alert (repeat 0), its `repeat`-th reminder, or its resolved alert. */
  function documentOf(episode: Episode, status: "firing" | "resolved", repeat = 0): AlertDocument {
    const at = status === "firing" ? (repeat > 0 ? (episode.reminded_at ?? episode.since) : episode.since) : (episode.resolved_at ?? episode.since);
    const summary = status === "firing" ? `kaiawatch: ${episode.summary}` : `kaiawatch: resolved: ${episode.summary}`;
    return {
      version: ALERT_DOCUMENT_VERSION,
      id: status === "resolved" ? resolvedAlertId(episode.id) : repeat > 0 ? reminderAlertId(episode.id, repeat) : episode.id,
      rule: OPERATIONAL_RULE,
      watch: OPERATIONAL_ALERT_SOURCE,
      source: OPERATIONAL_ALERT_SOURCE,
      network: options.network,
      block: options.head() ?? 0,
      transaction_hash: null,
      datetime: at,
      summary,
      links: {},
      record: { kind: episode.kind, condition: episode.key, since: episode.since, ...(status === "resolved" ? { resolved_at: at } : {}), ...(episode.detail ?? {}) },
      labels: { ...operationalLabels(episode) },
      created_at: new Date(common.now()).toISOString(),
      status,
      episode_id: episode.id,
      ...(status === "firing" ? { repeat } : {}),
    };
  }

  /** The alert's entries for the operational sinks and the receivers its labels route to. */
  function entriesOf(alert: AlertDocument): OutboxEntry[] {
    const routed = options.routes === undefined || alert.labels === undefined ? [] : receiversOf(matchRoutes(options.routes, alert.labels));
    const sinks = [...new Set([...options.sinks, ...routed])];
    return sinks.length === 0 ? [] : newOutboxEntries(alert, sinks, new Date(common.now()));
  }

  async function send(alert: AlertDocument): Promise<void> {
    const entries = entriesOf(alert);
    if (entries.length === 0) return;
    const { added } = await store.enqueue(entries);
    if (added > 0) options.onQueued();
  }

  async function save(): Promise<void> {
    if (!unsaved) return;
    unsaved = false;
    try {
      await writeMeta(store, OPERATIONAL_EPISODES, Object.fromEntries(episodes));
    } catch (error) {
      unsaved = true;
      throw error;
    }
  }

  /** Writes what the store has not taken yet, in the order that makes a crash between any two steps harmless. */
  async function flush(): Promise<void> {
    await save();
    for (const key of [...unqueued]) {
      const episode = episodes.get(key);
      if (episode !== undefined) await send(documentOf(episode, "firing"));
      unqueued.delete(key);
    }
    for (const key of [...unreminded]) {
      const episode = episodes.get(key);
      // A reminder not queued before its condition cleared is not sent: the resolve says more.
      if (episode !== undefined && episode.resolved_at === undefined && (episode.repeats ?? 0) > 0) await send(documentOf(episode, "firing", episode.repeats));
      unreminded.delete(key);
    }
    for (const episode of [...episodes.values()]) {
      if (episode.resolved_at === undefined) continue;
      await send(documentOf(episode, "resolved"));
      episodes.delete(episode.key);
      unsaved = true;
    }
    await save();
  }

  async function update(conditions: readonly OperationalCondition[]): Promise<void> {
    const now = new Date(common.now()).toISOString();
    const holding = new Map(conditions.map((condition) => [condition.key, common.secrets.redactDeep(condition)]));
    for (const condition of holding.values()) {
      const known = episodes.get(condition.key);
      if (known !== undefined && known.resolved_at === undefined) {
        remindIfDue(known, now);
        continue;
      }
      // A condition back before its last episode's resolved alert was queued: that one ends first.
      if (known !== undefined) await flush();
      const episode: Episode = { id: alertId(OPERATIONAL_RULE, `${condition.key}@${now}`), key: condition.key, kind: condition.kind, since: now, summary: condition.summary, detail: condition.detail };
      // Logged first: when the store is what is failing, the log is the only place it goes.
      if (options.sinks.length === 0) logger.warn({ kind: episode.kind, condition: episode.key, alert_id: episode.id }, `${episode.summary} (no sink is marked operational: true; only logged)`);
      else logger.warn({ kind: episode.kind, condition: episode.key, alert_id: episode.id, ...condition.detail }, episode.summary);
      episodes.set(condition.key, episode);
      unqueued.add(condition.key);
      unsaved = true;
      if (OUTBOX_CANNOT_CARRY.has(condition.kind) && !sentDirectly.has(condition.key) && options.sinks.length > 0 && options.sendDirectly !== undefined) {
        sentDirectly.add(condition.key);
        await options.sendDirectly(documentOf(episode, "firing"));
      }
    }
    for (const episode of episodes.values()) {
      if (holding.has(episode.key) || episode.resolved_at !== undefined) continue;
      episode.resolved_at = now;
      unsaved = true;
      logger.info({ kind: episode.kind, condition: episode.key, alert_id: resolvedAlertId(episode.id), since: episode.since }, `resolved: ${episode.summary}`);
    }
    // The store takes no write now, nor later in this process: what it has not taken stays in memory (and the log).
    if (conditions.some((condition) => OUTBOX_CANNOT_CARRY.has(condition.kind))) return;
    await flush();
  }

  /**
   * Decides the next reminder of a firing episode once its `repeat_interval` has passed since
   * its last firing alert (at the first check after: check_interval is the granularity). The
   * count is saved before the reminder is queued, under an id derived from it: a crash in
   * between queues the same reminder again at the next start, which the outbox keeps once.
   */
  function remindIfDue(episode: Episode, now: string): void {
    const interval = options.repeatInterval?.(documentOf(episode, "firing"));
    if (interval === undefined || interval <= 0) return;
    const last = Date.parse(episode.reminded_at ?? episode.since);
    if (Date.parse(now) - last < interval) return;
    episode.repeats = (episode.repeats ?? 0) + 1;
    episode.reminded_at = now;
    unreminded.add(episode.key);
    unsaved = true;
    logger.warn({ kind: episode.kind, condition: episode.key, alert_id: reminderAlertId(episode.id, episode.repeats), repeat: episode.repeats, since: episode.since }, `still: ${episode.summary}`);
  }

  async function reload(): Promise<void> {
    const read = await stored();
    episodes.clear();
    unqueued.clear();
    unreminded.clear();
    for (const [key, episode] of read) {
      episodes.set(key, episode);
      unqueued.add(key);
      if ((episode.repeats ?? 0) > 0) unreminded.add(key);
    }
    unsaved = false;
  }

  // One update (or reload) at a time: two overlapping ones could both open the same episode.
  const serial = (work: () => Promise<void>): Promise<void> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };
  return {
    update: (conditions) => serial(() => update(conditions)),
    reload: () => serial(reload),
    eventEntries: (event) => entriesOf(eventAlert(common.secrets.redactDeep(event), options.network, options.head() ?? 0, new Date(common.now()).toISOString())),
    active: () => [...episodes.values()].filter((episode) => episode.resolved_at === undefined),
  };
}

/** The one-shot alert of an event (OperationalMonitor.eventEntries): at its block where it names one, else at the head. */
function eventAlert(event: OperationalCondition, network: string, head: number, at: string): AlertDocument {
  return {
    version: ALERT_DOCUMENT_VERSION,
    id: alertId(OPERATIONAL_RULE, event.key),
    rule: OPERATIONAL_RULE,
    watch: OPERATIONAL_ALERT_SOURCE,
    source: OPERATIONAL_ALERT_SOURCE,
    network,
    block: typeof event.detail.block === "number" ? event.detail.block : head,
    transaction_hash: typeof event.detail.transaction_hash === "string" ? event.detail.transaction_hash : null,
    datetime: at,
    summary: `kaiawatch: ${event.summary}`,
    links: {},
    record: { kind: event.kind, condition: event.key, ...event.detail },
    labels: { ...operationalLabels(event) },
    created_at: at,
  };
}

/**
 * An operational alert's labels: rule `kaiawatch.operational`, source `kaiawatch`, the
 * condition's `kind`, and the watch (or sink) the condition is about, so that a route (or an
 * inhibition's `equal: [watch]`) can tell a failing source of the treasury watch from
 * another's. `watch` is `kaiawatch` when the condition is about kaiawatch as a whole.
 */
export function operationalLabels(episode: Pick<Episode, "kind" | "detail">): Labels {
  const detail = episode.detail ?? {};
  const watch = typeof detail.watch === "string" ? detail.watch : OPERATIONAL_ALERT_SOURCE;
  const sink = typeof detail.sink === "string" ? { sink: detail.sink } : undefined;
  return alertLabels({ rule: OPERATIONAL_RULE, watch, source: OPERATIONAL_ALERT_SOURCE, kind: episode.kind, ...(sink === undefined ? {} : { labels: sink }) });
}
