import type { RecordFamily } from "./record.js";

/**
 * Where an alert came from: a record family for a rule's alert, or "kaiawatch" for
 * kaiawatch's own operational alerts (the daily credit budget), whose `record` describes
 * kaiawatch's event rather than an explorer record.
 */
export type AlertSource = RecordFamily | typeof BALANCE_ALERT_SOURCE | typeof OPERATIONAL_ALERT_SOURCE;

/** The `source` of a balance watch's alerts (and of its rules): balances read at the head by JSON-RPC. */
export const BALANCE_ALERT_SOURCE = "balances";

/** What a rule reads: a record family, or the balances of a balance watch. */
export type RuleSource = RecordFamily | typeof BALANCE_ALERT_SOURCE;

/** The `source` (and `watch`) of kaiawatch's own operational alerts. */
export const OPERATIONAL_ALERT_SOURCE = "kaiawatch";

/**
 * The lifecycle of an alert that has one (a balance below a threshold, an operational
 * condition): "firing" when the condition starts to hold, "resolved" when it stops. Absent:
 * a one-shot alert about one record, as every alert was before lifecycles.
 */
export type AlertStatus = "firing" | "resolved";

/** How bad an alert is, in PagerDuty's four levels (a rule's `severity`). */
export const ALERT_SEVERITIES = ["critical", "error", "warning", "info"] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

/** Bumped whenever a field of the alert document changes meaning or disappears. */
export const ALERT_DOCUMENT_VERSION = 1;

/**
 * The alert document: the JSON body of a webhook and what templates see. Everything
 * under `record` and `enrichment` was written by strangers on chain: data, never markup.
 */
export interface AlertDocument {
  version: typeof ALERT_DOCUMENT_VERSION;
  /**
   * Stable across retries and restarts: derived from the rule and the record's identity key.
   * An alert with a lifecycle keeps one id family: the firing alert's id is the episode id,
   * the resolved alert's is `${episodeId}:resolved` (see alert-status.ts).
   */
  id: string;
  rule: string;
  watch: string;
  /** The record family the record came from, or "kaiawatch" for an operational alert. */
  source: AlertSource;
  /** "mainnet", "kairos" or the configured network name. */
  network: string;
  block: number;
  transaction_hash: string | null;
  /** ISO-8601 UTC of the block when the record carries it. */
  datetime: string | null;
  /** One short line, plain text, built from operator-chosen fields; on-chain text is escaped by each sink. */
  summary: string;
  links: { transaction?: string; block?: string; account?: string; contract?: string; token?: string };
  /**
   * The explorer record as received, but for what validation changes (docs/alert-document.md, "The alert
   * document"): amount, token_count and token_id numbers become exact decimal text, and
   * null fields are removed.
   */
  record: unknown;
  /**
   * A token watch's Transfer: the token (symbol is on-chain text, null when the contract has
   * none) and the exact amount in whole tokens as decimal text ("1250.5").
   */
  token?: { address: string; symbol: string | null; decimals: number; amount: string };
  /** Extra lookups the rule asked for, by name; `{ error }` when a lookup failed. */
  enrichment?: Record<string, unknown>;
  /** Absent for a one-shot alert; see AlertStatus. */
  status?: AlertStatus;
  /**
   * An alert with a lifecycle: the id of its episode (the first firing alert's id), the same
   * on the firing alert, every reminder and the resolved alert. What a receiver correlates on.
   */
  episode_id?: string;
  /**
   * A firing alert: 0 on the first one of its episode, n on its n-th reminder (sent every
   * `repeat_interval` while the episode fires, docs/reminders-and-inhibition.md). A reminder
   * has its own `id` (`${episode_id}:repeat:${n}`), so a receiver that drops a repeated id
   * (Standard Webhooks' webhook-id) still takes it.
   */
  repeat?: number;
  /** The rule's `severity`, when it sets one; a sink that needs one (PagerDuty) uses its own default otherwise. */
  severity?: AlertSeverity;
  /**
   * Its labels (docs/routes.md): the rule's `labels:`, `severity`, and `rule`, `watch`,
   * `source` (and `kind` for an operational alert). Routes match on them. Absent on alerts
   * queued before labels existed: src/notify/labels.ts derives them from the fields.
   */
  labels?: Record<string, string>;
  /** When kaiawatch created the alert (ISO-8601 UTC). */
  created_at: string;
}
