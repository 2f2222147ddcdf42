import { z } from "zod";
import type { CreditMeterState } from "../explorer/credit-meter.js";
import { metaSlot, type MetaSlot } from "../store/meta-slot.js";

export const CREDITS_META_KEY = "credits";

const creditMeterState = z
  .object({ day: z.string(), spent: z.number(), byOperation: z.record(z.string(), z.number()).default({}) })
  // The meter takes only the operations it knows when it restores (credit-meter.ts).
  .transform((state) => state as CreditMeterState);

/**
 * The day's credit spending, which survives restarts (or a restart would reset the budget).
 * Replicas each keep their own (`credits.<replica>`), and the budget counts them all.
 */
export function creditsSlot(replicaId?: string): MetaSlot<CreditMeterState> {
  return metaSlot(replicaId === undefined ? CREDITS_META_KEY : `${CREDITS_META_KEY}.${replicaId}`, creditMeterState);
}
