import { WITNESS_ROLES, type WitnessRole } from "../model/witness-role.js";
import type { Witness } from "./types.js";

export { otherRole } from "../model/witness-role.js";

/**
 * The witnesses' rows, the same in SQLite and PostgreSQL (see Witness): the columns in
 * INSERT order, a row read back, and the counts by role.
 */
export const WITNESS_COLUMNS = "alert_id, role, watch, family, rule, block, record_key, summary, transaction_hash, seen_at, missed_at";

/** A witness row as a driver returns it (PostgreSQL's bigint block as text). */
export type WitnessRow = Omit<Witness, "block" | "missed_at"> & { block: number | string; missed_at: string | null };

export function witnessOfRow(row: WitnessRow): Witness {
  const witness: Witness = { alert_id: row.alert_id, role: row.role, watch: row.watch, family: row.family, rule: row.rule, block: Number(row.block), record_key: row.record_key, summary: row.summary, transaction_hash: row.transaction_hash, seen_at: row.seen_at };
  if (row.missed_at !== null) witness.missed_at = row.missed_at;
  return witness;
}

/** The values of a new (open) witness's row, in WITNESS_COLUMNS order. */
export function witnessParams(witness: Witness): Array<string | number | null> {
  return [witness.alert_id, witness.role, witness.watch, witness.family, witness.rule, witness.block, witness.record_key, witness.summary, witness.transaction_hash, witness.seen_at, null];
}

/** Counts by role with every role present (0 where none). */
export function missedByRole(rows: ReadonlyArray<{ role: string; n: number | string }>): Record<WitnessRole, number> {
  const out = Object.fromEntries(WITNESS_ROLES.map((role) => [role, 0])) as Record<WitnessRole, number>;
  for (const row of rows) if (row.role === "explorer" || row.role === "node") out[row.role] = Number(row.n);
  return out;
}
