import type { OutboxEntry } from "../../model/outbox-entry.js";
import { entryOfPgRow, OUTBOX_COLUMNS, type PgOutboxRow, type Queryable } from "./rows.js";

/**
 * Delivery shared by replicas: before sending, a replica claims the due pending entries of a
 * sink for a while. The claim is one conditional UPDATE over rows picked with
 * `FOR UPDATE SKIP LOCKED` (the job-queue pattern of pg-boss and graphile-worker): two
 * replicas claiming at the same moment skip each other's rows instead of waiting, and never
 * get the same entry. A claim ends with the entry's outcome (updateOutbox clears it) or, if
 * the replica dies, lapses at its expiry and the entry is claimed again: at-least-once, and
 * the stable id lets a receiver drop the rare duplicate.
 */
export async function claimOutbox(
  db: Queryable,
  options: { sink: string; replicaId: string; now: number; limit: number; claimMs: number },
): Promise<OutboxEntry[]> {
  const { sink, replicaId, now, limit, claimMs } = options;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`limit must be a whole number ≥ 1, not ${limit}`);
  if (!Number.isSafeInteger(claimMs) || claimMs < 1) throw new TypeError(`claimMs must be a whole number ≥ 1, not ${claimMs}`);
  const result = await db.query<PgOutboxRow>(
    `UPDATE outbox SET claimed_by = $1, claim_expires_ms = $2
     WHERE seq IN (
       SELECT seq FROM outbox
       WHERE state = 'pending' AND sink = $3 AND due_ms <= $4 AND (claimed_by IS NULL OR claim_expires_ms <= $4)
       ORDER BY seq LIMIT $5
       FOR UPDATE SKIP LOCKED)
     RETURNING ${OUTBOX_COLUMNS}`,
    [replicaId, now + claimMs, sink, now, limit],
  );
  // RETURNING follows no order: the oldest first, as listings promise.
  return result.rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(entryOfPgRow);
}

/** Ends this replica's claims on the entries (the others' claims are left alone). */
export async function releaseOutboxClaims(db: Queryable, options: { ids: string[]; replicaId: string }): Promise<void> {
  if (options.ids.length === 0) return;
  await db.query("UPDATE outbox SET claimed_by = NULL, claim_expires_ms = NULL WHERE id = ANY($1) AND claimed_by = $2", [options.ids, options.replicaId]);
}
