import { createHash } from "node:crypto";
import { RULE_FIELD_ALIASES } from "./record-fields.js";
import type { OutboxEntry } from "../model/outbox-entry.js";

export interface GroupPolicy {
  /** A digest closes when its oldest alert has waited this long … */
  windowMs: number;
  /** … or when this many alerts are waiting. */
  max: number;
  /** A field of the alert's record: one digest per distinct value (see `readRecordField`). */
  by?: string;
  /**
   * A route's group that sent a digest: when its next one may go (that digest's time plus
   * group_interval). Alerts that arrive before then wait for it, not for `windowMs` (which is
   * group_wait, for a new group), as in Alertmanager.
   */
  continueAt?: number;
}

/**
 * Reads a field of an alert's record for `group.by` and `cooldown_key`:
 * - the name is a dot path into the explorer record as received (`from`, `token_id`,
 *   `contract.contract_address`, `transaction_status.status`);
 * - when the value is an object, its `contract_address` or `address` is used, so `contract`
 *   on an NFT transfer means the collection's address;
 * - when a plain name is missing, `<name>_address` is tried, so `contract` on an event log
 *   means its `contract_address`;
 * - text is lowercased (addresses compare case-insensitively); a missing field reads as ""
 *   (all such alerts share one digest / one cooldown).
 */
export function readRecordField(record: unknown, path: string): string {
  let value = walk(record, path.split("."));
  // A rule's name for the field (status, fail_message, transaction, block, estimated).
  for (const target of RULE_FIELD_ALIASES[path] ?? []) value ??= walk(record, target.split("."));
  if (value === undefined && !path.includes(".")) value = walk(record, [`${path}_address`]);
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    const inner = object.contract_address ?? object.address;
    value = inner !== undefined ? inner : JSON.stringify(value);
  }
  if (value === undefined || value === null) return "";
  return String(value).toLowerCase();
}

function walk(value: unknown, keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * A digest's id: a hash of its members' entry ids, so that the same members always make the
 * same id (a crash between choosing and persisting a group repeats the same choice).
 */
export function groupId(entryIds: readonly string[]): string {
  const hash = createHash("sha256");
  for (const id of [...entryIds].sort()) hash.update(id).update("\n");
  return `grp_${hash.digest("hex").slice(0, 32)}`;
}

export interface ClosedGroup {
  id: string;
  entries: OutboxEntry[];
}

/**
 * Splits the waiting entries of one rule and one `by` value (oldest first) into digests that
 * are ready: full ones (`max` entries) at once, the rest when its oldest entry is `windowMs`
 * old (or at once when `flush`). Returns the ready digests and when the rest becomes ready.
 */
export function closeGroups(waiting: readonly OutboxEntry[], policy: GroupPolicy, now: number, flush: boolean): { closed: ClosedGroup[]; readyAt: number | undefined } {
  const closed: ClosedGroup[] = [];
  const max = Math.max(1, Math.floor(policy.max));
  let rest = [...waiting];
  while (rest.length > 0) {
    let oldest = Infinity;
    for (const entry of rest) oldest = Math.min(oldest, Date.parse(entry.created_at));
    const readyAt = policy.continueAt !== undefined && policy.continueAt > oldest ? policy.continueAt : oldest + policy.windowMs;
    if (rest.length < max && !flush && readyAt > now) return { closed, readyAt };
    const members = rest.slice(0, max);
    rest = rest.slice(max);
    closed.push({ id: groupId(members.map((e) => e.id)), entries: members });
  }
  return { closed, readyAt: undefined };
}
