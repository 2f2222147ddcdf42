import type { RuleLookup } from "./rule-lookup.js";
import type { Common } from "../common/common.js";
import type { Store } from "../store/types.js";
import { admit, type DispatcherRule } from "./admission.js";
import { applyAdmission } from "./apply-admission.js";
import { readCooldownView } from "./cooldown.js";
import { readGroupFlushes } from "./route-grouping.js";
import type { Route } from "./routes.js";
import type { Deliveries, DeliveryTotals } from "./deliveries.js";
import type { OutcomeGate } from "./outcome-gate.js";
import { readDueEntries } from "./due-entries.js";
import type { Inhibitor } from "./inhibitor.js";
import type { SilenceBook } from "./silences.js";
import type { Worker } from "./sink-worker.js";

export interface WorkerPassOptions {
  store: Store;
  rules: RuleLookup<DispatcherRule>;
  /** The `routes:` tree, which groups the alerts it sent. */
  routes?: Route;
  silences?: Pick<SilenceBook, "current" | "noteHeld">;
  /** `inhibit_rules:` and the sources firing now. */
  inhibitor?: Pick<Inhibitor, "rules" | "current" | "noteHeld">;
  /** The most due entries one pass reads (oldest first). */
  passLimit: number;
  /** Open digests are sent at once while this says so (a drain). */
  flushGroups: () => boolean;
  deliveries: Deliveries;
  /** Whether sends may start (not while the store cannot record their outcomes). */
  gate: OutcomeGate;
  totals: DeliveryTotals;
  updateGauges: (sink: string) => Promise<void>;
  logger: Common["logger"];
}

/**
 * One pass of a sink's worker: reads what is due, admits it (silences, cooldown, digests;
 * the pure stage), writes what admission decided, and starts the sends there are slots for,
 * queueing the rest. Returns when something becomes due next (a backoff ending, a digest
 * closing), if anything.
 */
export function createWorkerPass(common: Common, options: WorkerPassOptions): (w: Worker, signal: AbortSignal) => Promise<number | undefined> {
  const { store } = options;
  return async function pass(w, signal) {
    // A send finishing while this pass awaits must not start a delivery the pass is planning again.
    w.queue = [];
    // The store cannot record an outcome: nothing is read or sent until it can (outcome-gate.ts).
    const heldUntil = await options.gate.check();
    if (heldUntil !== undefined) return heldUntil;
    const now = common.now();
    const at = new Date(now).toISOString();
    // Taken before the read: a send that ends while the read awaits records its entries, and
    // the list read before that still shows them pending; they must not be planned again.
    const inFlight = new Set(w.inFlight);
    const due = await readDueEntries(store, w.name, at, options.passLimit);
    // Both read from the store at every pass that has something due: another replica (or the
    // CLI) may have added a silence, or delivered this sink and stamped its cooldowns, since.
    const cooldown = await readCooldownView(store, w.name, due, options.rules);
    const groupFlushes = await readGroupFlushes(store, w.name, due, options.rules, options.routes);
    const silences = due.length > 0 && options.silences ? await options.silences.current(now) : [];
    const inhibitRules = options.inhibitor?.rules ?? [];
    const firing = due.length > 0 && options.inhibitor !== undefined && inhibitRules.length > 0 ? await options.inhibitor.current(now) : [];
    const admission = admit({ sink: w.name, due, inFlight, rules: options.rules, routes: options.routes, groupFlushes, silences, inhibitRules, firing, cooldown, flushGroups: options.flushGroups(), now });
    let nextAt = admission.nextAt;
    const soonest = (time: number) => {
      nextAt = nextAt === undefined ? time : Math.min(nextAt, time);
    };
    // Entries in backoff are not read; the store says when the first of them ends.
    const later = await store.nextAttemptAfter(w.name, at);
    if (later !== undefined) soonest(Date.parse(later));
    // Awaited first, then added: `totals.suppressed += await …` reads the total before the
    // await, so two sinks' passes awaiting together lost one's count (a drain said 1 of 2).
    const suppressed = await applyAdmission({ store, common, silences: options.silences, inhibitor: options.inhibitor, logger: w.logger }, w.name, admission, now);
    options.totals.suppressed += suppressed;
    signal.throwIfAborted();
    // A write failed while this pass read (an outcome's commit): what it planned waits for the store.
    if (options.gate.held()) return common.now();

    let launched = 0;
    for (const delivery of admission.sends) {
      // A full worker is woken by the send that finishes; the rest wait in the queue.
      if (w.inFlightCount >= Math.max(1, w.options.concurrency)) break;
      options.deliveries.launch(w, delivery);
      launched += 1;
    }
    w.queue = admission.sends.slice(launched);
    w.queuedAt = now;
    // A full batch that started nothing (all suppressed, say) leaves due entries behind it and
    // no send whose end would wake the worker: the next pass comes at once. Not otherwise: a
    // busy worker re-reading its batch at every turn would spend its time reading.
    if (due.length >= options.passLimit && launched === 0 && w.queue.length === 0 && w.inFlightCount === 0) soonest(now);

    await options.updateGauges(w.name);
    return nextAt;
  };
}
