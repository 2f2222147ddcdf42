/**
 * A silence holds back the alerts of one rule whose record matches every `match` field
 * until `expires_at`. It never changes once made; removing it leaves a tombstone. Shared by
 * the notify layer (which applies it) and the store (which keeps it for replicas).
 */
export interface Silence {
  /** `sil_` + 8 hex digits. */
  id: string;
  rule: string;
  /** Record field (read like `group.by`: a dot path, lowercase) → value, compared case-insensitively. */
  match: Record<string, string>;
  reason: string;
  created_at: string;
  expires_at: string;
}
