/**
 * A silence holds back, until `expires_at`, the alerts that meet all it names: label matchers
 * (as Alertmanager's silences, the matchers routes use), a rule, and record fields of that
 * rule's alerts (one noisy counterparty). It never changes once made; removing it leaves a
 * tombstone. Shared by the notify layer (which applies it) and the store (which keeps it for
 * replicas).
 */
export interface Silence {
  /** `sil_` + 8 hex digits. */
  id: string;
  /** The rule whose alerts it holds; absent: any rule's (a label silence). */
  rule?: string;
  /** Record field (read like `group.by`: a dot path, lowercase) → value, compared case-insensitively; only with `rule`. */
  match: Record<string, string>;
  /** Label matchers, each as the matcher parser prints it (`severity="warning"`); absent or empty: none. */
  matchers?: string[];
  reason: string;
  created_at: string;
  expires_at: string;
}
