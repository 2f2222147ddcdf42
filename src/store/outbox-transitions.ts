import { StoreError } from "./errors.js";
import type { OutboxChange } from "./types.js";
import type { OutboxState } from "../model/outbox-entry.js";

/**
 * The rules of OutboxChange (see types.ts), shared by every store so that SQLite and
 * PostgreSQL refuse exactly the same batches. Pure: the caller reads the states.
 */

/** Why `change` cannot apply to an entry in `state`, or undefined when it can. */
export function transitionProblem(state: OutboxState, change: OutboxChange): string | undefined {
  switch (change.kind) {
    case "delivered":
      return state === "dead" ? "a dead entry must be requeued before it can be delivered" : undefined;
    case "failed":
    case "defer":
    case "group":
      return state === "pending" ? undefined : `the entry is ${state}, not pending`;
    case "dead":
      return state === "delivered" ? "a delivered entry cannot become dead" : undefined;
    case "requeue":
      return state === "delivered" ? "a delivered entry cannot be requeued" : undefined;
  }
}

/** The state an entry is in after an allowed `change`. */
export function stateAfter(state: OutboxState, change: OutboxChange): OutboxState {
  switch (change.kind) {
    case "delivered":
      return "delivered";
    case "dead":
      return "dead";
    case "requeue":
      return "pending";
    default:
      return state;
  }
}

export function outboxChangeError(change: OutboxChange, problem: string): StoreError {
  return new StoreError("KW_STORE_OUTBOX_CHANGE", `cannot apply "${change.kind}" to outbox entry ${change.id}: ${problem}; no change of this batch was applied`);
}

/**
 * Checks a whole batch before any of it applies, following the states the batch itself
 * produces (two changes may name one entry): a batch is all or nothing. `stateOf` reads the
 * stored state of an entry (undefined: no such entry). Throws KW_STORE_OUTBOX_CHANGE.
 */
export function checkOutboxChanges(changes: readonly OutboxChange[], stateOf: (id: string) => OutboxState | undefined): void {
  const states = new Map<string, OutboxState>();
  for (const change of changes) {
    const state = states.get(change.id) ?? stateOf(change.id);
    if (state === undefined) throw outboxChangeError(change, "no such outbox entry");
    const problem = transitionProblem(state, change);
    if (problem !== undefined) throw outboxChangeError(change, problem);
    states.set(change.id, stateAfter(state, change));
  }
}
