import type { Common } from "../common/common.js";
import type { Store } from "../store/types.js";
import { findMissed, type AuditPlan, type MissedRecord } from "../watch/audit-plan.js";
import type { OperationalCondition, OperationalMonitor } from "./operational-monitor.js";

/** The operational alert kind of a record the explorer did not return, and of one the node did not. */
export const MISSED_RECORD_KIND = { explorer: "explorer_missed_record", node: "node_missed_record" } as const;

export interface WitnessAudit {
  /** One pass: reports every record a reader has passed without returning it (once each); returns how many it reported. */
  run(): Promise<number>;
}

/**
 * The operational alert of one missed record (the witnesses of its rules, one or more: each
 * rule's alert has its own id), keyed by the record, so that a record is reported once
 * however many rules matched it. It carries the record's key and summary and where each
 * reader was, never the record's document.
 */
export function missedRecordEvent(records: readonly MissedRecord[]): OperationalCondition {
  const { witness, missedBy, position } = records[0]!;
  const kind = MISSED_RECORD_KIND[missedBy];
  return {
    key: recordKeyOf(records[0]!),
    kind,
    summary: `the ${missedBy} did not return a record the ${witness.role} showed at block ${witness.block}, though it has read watch ${witness.watch} up to block ${position}: ${witness.summary}`,
    detail: {
      watch: witness.watch,
      family: witness.family,
      rules: records.map((record) => record.witness.rule),
      alert_ids: records.map((record) => record.witness.alert_id),
      record_key: witness.record_key,
      record_summary: witness.summary,
      block: witness.block,
      transaction_hash: witness.transaction_hash,
      seen_by: witness.role,
      seen_at: witness.seen_at,
      missed_by: missedBy,
      position,
    },
  };
}

const recordKeyOf = ({ witness, missedBy }: MissedRecord) => `${MISSED_RECORD_KIND[missedBy]}:${witness.watch}:${witness.family}:${witness.record_key}`;

/**
 * The audit of `source: both` watches (docs/operations.md, "Two witnesses"), run by the
 * replica that sends the operational alerts at each of its health checks. It reads the
 * witnesses and the readers' positions from the store, never from memory, so it holds when
 * the two readers run in different replicas and across restarts; and the store marks each
 * missed witness in the same write as its alert's entries (settleWitnesses), so a record is
 * reported once, whichever replica or restart gets there first.
 */
export function createWitnessAudit(common: Common, parts: { store: Store; plan: AuditPlan; monitor: Pick<OperationalMonitor, "eventEntries">; onQueued: () => void }): WitnessAudit {
  const { store, plan } = parts;
  const logger = common.logger.child({ component: "audit" });
  return {
    async run() {
      const missed = await findMissed(store, plan);
      if (missed.length === 0) return 0;
      const byRecord = new Map<string, MissedRecord[]>();
      for (const record of missed) {
        const key = recordKeyOf(record);
        const list = byRecord.get(key);
        if (list === undefined) byRecord.set(key, [record]);
        else list.push(record);
      }
      const events = [...byRecord.values()].map((records) => ({ records, event: missedRecordEvent(records) }));
      // Each witness carries its record's entries (one alert id: the outbox keeps them once).
      const { marked, added } = await store.settleWitnesses({
        missed: events.flatMap(({ records, event }) => {
          const entries = parts.monitor.eventEntries(event);
          return records.map(({ witness }) => ({ alert_id: witness.alert_id, role: witness.role, entries }));
        }),
        at: new Date(common.now()).toISOString(),
      });
      const settled = new Set(marked.map((m) => `${m.alert_id}\u0000${m.role}`));
      let reported = 0;
      for (const { records, event } of events) {
        if (!records.some(({ witness }) => settled.has(`${witness.alert_id}\u0000${witness.role}`))) continue;
        reported += 1;
        common.metrics.missedRecords.inc({ source: records[0]!.missedBy });
        logger.warn({ kind: event.kind, condition: event.key, ...common.secrets.redactDeep(event.detail) }, event.summary);
      }
      if (added > 0) parts.onQueued();
      return reported;
    },
  };
}
