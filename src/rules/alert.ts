import type { RecordFamily } from "../watch/record.js";

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
  /** The source family the record came from. */
  source: RecordFamily;
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
}
