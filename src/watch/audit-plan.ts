import type { Store, Witness, WitnessRole } from "../store/types.js";
import { otherRole } from "../model/witness-role.js";
import type { Match } from "./source-rule.js";
import type { PlannedSource } from "./poller.js";
import { isNodeOperation, type SourceOperation } from "./source.js";

/** The reader a source is of a `source: both` watch: the node's for a node operation, the explorer's otherwise. */
export function witnessRoleOf(operation: SourceOperation): WitnessRole {
  return isNodeOperation(operation) ? "node" : "explorer";
}

/**
 * Which watches' records are audited, and where each reader of them has got to. A watch under
 * `source: both` is read by its explorer source(s) and by its share of a node source; a record
 * family of it that both serve is audited (internal transactions only with chain.traces,
 * where the node's traces serve them too). A reader's position for a (watch, family) is the lowest of its sources'
 * positions for the watch: each source's cursor, or the watch's position under its own key
 * while a shared source serves it (SourceMember.ownKey, which follows the source's cursor). The lowest,
 * because a watch of two events has two explorer sources, and a record of the second is not
 * missed while that one is behind, however far the first has gone.
 */
export interface AuditPlan {
  /** Whether the alerts of this (watch, family) are witnessed. */
  audits(watch: string, family: string): boolean;
  /** The keys of one reader's positions for a (watch, family); empty when it does not serve it. */
  positionKeys(watch: string, family: string, role: WitnessRole): readonly string[];
  /** How many (watch, family) pairs are audited (0: nothing to do). */
  readonly size: number;
}

const pairKey = (watch: string, family: string) => `${watch}\u0000${family}`;

/**
 * The audit of a plan: every (watch, family) that an explorer source and a node source both
 * serve, which only `source: both` plans. With `both`, only the watches named there.
 */
export function planAudit(sources: ReadonlyArray<Pick<PlannedSource, "key" | "definition" | "watch" | "family" | "members">>, both?: ReadonlySet<string>): AuditPlan {
  const keys = new Map<string, Record<WitnessRole, string[]>>();
  for (const source of sources) {
    const role = witnessRoleOf(source.definition.operation);
    for (const member of source.members ?? [{ watch: source.watch, ownKey: source.key }]) {
      if (both !== undefined && !both.has(member.watch)) continue;
      const key = pairKey(member.watch, source.family);
      let entry = keys.get(key);
      if (entry === undefined) keys.set(key, (entry = { explorer: [], node: [] }));
      if (!entry[role].includes(member.ownKey)) entry[role].push(member.ownKey);
    }
  }
  for (const [key, entry] of keys) if (entry.explorer.length === 0 || entry.node.length === 0) keys.delete(key);
  return {
    audits: (watch, family) => keys.has(pairKey(watch, family)),
    positionKeys: (watch, family, role) => keys.get(pairKey(watch, family))?.[role] ?? [],
    size: keys.size,
  };
}

/** The witnesses a window of a source of this role writes: its matches of audited watches. */
export function witnessesOf(plan: AuditPlan | undefined, role: WitnessRole, family: string, matches: readonly Match[], seenAt: Date): Witness[] {
  if (plan === undefined || plan.size === 0) return [];
  const out: Witness[] = [];
  for (const { rule, alert, record } of matches) {
    if (!plan.audits(alert.watch, family)) continue;
    out.push({ alert_id: alert.id, role, watch: alert.watch, family, rule: rule.name, block: alert.block, record_key: record.key, summary: alert.summary, transaction_hash: alert.transaction_hash, seen_at: seenAt.toISOString() });
  }
  return out;
}

/** An open witness the other reader has passed without finding its alert. */
export interface MissedRecord {
  witness: Witness;
  /** The reader that did not return it. */
  missedBy: WitnessRole;
  /** Where that reader is (at or past the witness's block). */
  position: number;
}

/**
 * The open witnesses whose other reader is at or past their block: it has read that block
 * for the watch and not returned the record. Everything is read from the store (the
 * witnesses, the positions), never from this process's memory: the two readers may run in
 * two replicas, and either may have restarted since.
 */
export async function findMissed(store: Pick<Store, "listWitnesses" | "getCursor">, plan: AuditPlan): Promise<MissedRecord[]> {
  if (plan.size === 0) return [];
  const open = await store.listWitnesses({ missed: false });
  const positions = new Map<string, Promise<number | undefined>>();
  const positionOf = (key: string) => {
    let position = positions.get(key);
    if (position === undefined) positions.set(key, (position = store.getCursor(key).then((cursor) => cursor?.block)));
    return position;
  };
  const missed: MissedRecord[] = [];
  for (const witness of open) {
    const missedBy = otherRole(witness.role);
    const keys = plan.positionKeys(witness.watch, witness.family, missedBy);
    // A watch no longer audited (the config changed): nothing says where its other reader is.
    if (keys.length === 0) continue;
    const blocks = await Promise.all(keys.map(positionOf));
    // A position not kept yet: that reader has not started on the watch.
    if (blocks.some((block) => block === undefined)) continue;
    const position = Math.min(...(blocks as number[]));
    if (position >= witness.block) missed.push({ witness, missedBy, position });
  }
  return missed;
}
