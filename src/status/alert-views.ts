import type { Dispatcher } from "../notify/dispatcher.js";
import { readSuppressedNotes } from "../notify/cooldown.js";
import type { OutboxEntry } from "../model/outbox-entry.js";
import type { Store } from "../store/types.js";

/** Alerts /status lists (newest first), and dead letters at most. */
export const LATEST_ALERTS = 50;
export const DEAD_LETTERS_SHOWN = 200;
/** Dead letters read to group them for the page (by digest, else by reason): more than a person reads one by one. */
export const DEAD_LETTERS_GROUPED = 10_000;
/** Entry ids a reason group carries for its re-queue button (the requeue API's limit). */
const GROUP_IDS_LIMIT = 1000;
/** On-chain text in /status is cut to this many characters: the page shows a line, not a record. */
const TEXT_LIMIT = 500;

/** One delivery of an alert as /status shows it. */
interface DeliveryView {
  sink: string;
  entry_id: string;
  /** "suppressed": held back by a silence or a cooldown, never sent (the store keeps it as delivered). */
  state: OutboxEntry["state"] | "suppressed";
  attempts: number;
  error: string | null;
}

/** The sections of /status read from the outbox: the latest alerts, the dead letters and each sink's backlog. */
export interface AlertViews {
  latestAlerts(): Promise<unknown[]>;
  deadLetters(): Promise<{ total: number; shown: unknown[] }>;
  deadLetterGroups(): Promise<unknown[]>;
  oldestPending(): Promise<Record<string, string | null>>;
}

export function createAlertViews(parts: { store: Store; dispatcher: Dispatcher; explorer: string | undefined }): AlertViews {
  const { store, dispatcher, explorer } = parts;

  /** Links we build from numbers and hashes we checked, never a URL taken from a record. */
  function linksOf(alert: OutboxEntry["alert"]): { block?: string; transaction?: string } {
    if (explorer === undefined || !/^https?:\/\//i.test(explorer)) return {};
    const links: { block?: string; transaction?: string } = {};
    if (Number.isSafeInteger(alert.block) && alert.block >= 0) links.block = `${explorer}/block/${alert.block}`;
    if (typeof alert.transaction_hash === "string" && /^0x[0-9a-fA-F]{64}$/.test(alert.transaction_hash)) links.transaction = `${explorer}/tx/${alert.transaction_hash}`;
    return links;
  }

  /**
   * The latest alerts in the outbox (every state), newest first, each with its deliveries per
   * sink. An alert's entries are added together, one per sink: reading LATEST_ALERTS times
   * the number of sinks (and some) of the newest entries finds them without reading the rest.
   */
  async function latestAlerts() {
    const sinks = Math.max(1, Object.keys(await dispatcher.states()).length);
    const entries = await store.listOutbox({ newestFirst: true, limit: LATEST_ALERTS * (sinks + 1) });
    const suppressed = await readSuppressedNotes(store, entries);
    const byAlert = new Map<string, { entry: OutboxEntry; deliveries: DeliveryView[] }>();
    for (const entry of entries) {
      const state = entry.state === "delivered" && suppressed[entry.id] !== undefined ? "suppressed" : entry.state;
      const delivery: DeliveryView = { sink: entry.sink, entry_id: entry.id, state, attempts: entry.attempts, error: cut(entry.dead_reason ?? entry.last_error ?? null) };
      const known = byAlert.get(entry.alert.id);
      if (known) known.deliveries.push(delivery);
      else if (byAlert.size < LATEST_ALERTS) byAlert.set(entry.alert.id, { entry, deliveries: [delivery] });
    }
    return [...byAlert.values()].map(({ entry, deliveries }) => ({
      id: entry.alert.id,
      rule: entry.alert.rule,
      watch: entry.alert.watch,
      source: entry.alert.source,
      network: entry.alert.network,
      block: entry.alert.block,
      transaction_hash: entry.alert.transaction_hash,
      datetime: entry.alert.datetime,
      created_at: entry.alert.created_at,
      summary: cut(entry.alert.summary),
      links: linksOf(entry.alert),
      deliveries: deliveries.sort((a, b) => a.sink.localeCompare(b.sink)),
    }));
  }

  async function deadLetters() {
    return {
      total: await store.countOutbox({ state: "dead" }),
      shown: (await store.listOutbox({ state: "dead", newestFirst: true, limit: DEAD_LETTERS_SHOWN })).map((entry) => ({
          id: entry.id,
          sink: entry.sink,
          alert_id: entry.alert.id,
          rule: entry.rule,
          digest: entry.group_id ?? null,
          block: entry.alert.block,
          summary: cut(entry.alert.summary),
          attempts: entry.attempts,
          reason: cut(entry.dead_reason ?? entry.last_error ?? null),
          created_at: entry.created_at,
          links: linksOf(entry.alert),
        })),
    };
  }

  /**
   * Dead letters grouped as a person handles them: one row per failed digest (its alerts went
   * as one message and failed as one), and one per sink and reason for the rest, with what a
   * re-queue of the whole group sends.
   */
  async function deadLetterGroups() {
    const groups = new Map<string, { sink: string; digest: string | null; reason: string | null; rules: string[]; count: number; newest_at: string; ids: string[] }>();
    for (const entry of await store.listOutbox({ state: "dead", newestFirst: true, limit: DEAD_LETTERS_GROUPED })) {
      const reason = cut(entry.dead_reason ?? entry.last_error ?? null);
      const key = entry.group_id !== undefined ? `digest\u0000${entry.group_id}` : `reason\u0000${entry.sink}\u0000${reason ?? ""}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { sink: entry.sink, digest: entry.group_id ?? null, reason, rules: [], count: 0, newest_at: entry.created_at, ids: entry.group_id !== undefined ? [entry.group_id] : [] };
        groups.set(key, group);
      }
      group.count += 1;
      if (!group.rules.includes(entry.rule)) group.rules.push(entry.rule);
      if (group.digest === null && group.ids.length < GROUP_IDS_LIMIT) group.ids.push(entry.id);
    }
    return [...groups.values()].sort((a, b) => b.count - a.count || b.newest_at.localeCompare(a.newest_at));
  }

  /** When each sink's oldest pending alert was queued: a backlog that does not move is a stalled sink. */
  async function oldestPending(): Promise<Record<string, string | null>> {
    const out: Record<string, string | null> = {};
    for (const name of Object.keys(await dispatcher.states())) out[name] = (await store.listOutbox({ sink: name, state: "pending", limit: 1 }))[0]?.created_at ?? null;
    return out;
  }

  return { latestAlerts, deadLetters, deadLetterGroups, oldestPending };
}

function cut(text: string): string;
function cut(text: string | null): string | null;
function cut(text: string | null): string | null {
  if (text === null || text.length <= TEXT_LIMIT) return text;
  return `${text.slice(0, TEXT_LIMIT)}…`;
}
