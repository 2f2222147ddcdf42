import type { RecordFamily } from "./record.js";

/**
 * Where an alert came from: a record family for a rule's alert, or "kaiawatch" for
 * kaiawatch's own operational alerts (the daily credit budget), whose `record` describes
 * kaiawatch's event rather than an explorer record.
 */
export type AlertSource = RecordFamily | typeof OPERATIONAL_ALERT_SOURCE;

/** The `source` (and `watch`) of kaiawatch's own operational alerts. */
export const OPERATIONAL_ALERT_SOURCE = "kaiawatch";

/** Bumped whenever a field of the alert document changes meaning or disappears. */
export const ALERT_DOCUMENT_VERSION = 1;

/**
 * The alert document: the JSON body of a webhook and what templates see. Everything
 * under `record` and `enrichment` was written by strangers on chain: data, never markup.
 */
export interface AlertDocument {
  version: typeof ALERT_DOCUMENT_VERSION;
  /** Stable across retries and restarts: derived from the rule and the record's identity key. */
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
   * The explorer record as received, but for what validation changes (README "The alert
   * document"): amount, token_count and token_id numbers become exact decimal text, and
   * null fields are removed.
   */
  record: unknown;
  /** Extra lookups the rule asked for, by name; `{ error }` when a lookup failed. */
  enrichment?: Record<string, unknown>;
  /** When kaiawatch created the alert (ISO-8601 UTC). */
  created_at: string;
  /**
   * For an alert with a lifecycle (kaiawatch's operational alerts): "firing" when its condition
   * began (the id is the episode's, stable), "resolved" when it cleared (id `${episode}:resolved`).
   * Absent for a one-shot alert.
   */
  status?: "firing" | "resolved";
}
