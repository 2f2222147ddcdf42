/**
 * AbortSignal helpers shared by every loop that waits (the explorer client, the engine, the
 * dispatcher's workers): links that a long-lived signal (the process shutdown signal) keeps
 * one listener for, however many calls follow it.
 */

/**
 * A signal aborted when any of the given ones is. Unlike AbortSignal.any, its listeners
 * are removed by `dispose()` as soon as the call ends, so long-lived signals (the process
 * shutdown signal) do not collect one listener per request.
 */
export function linkSignals(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose: () => void } {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 1) return { signal: present[0] as AbortSignal, dispose: () => {} };
  const controller = new AbortController();
  parentsOf.set(controller.signal, present);
  const aborted = present.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const removals = present.map((s) => onAbort(s, (reason) => controller.abort(reason)));
  return { signal: controller.signal, dispose: () => removals.forEach((remove) => remove()) };
}

// The signals that each linked or child signal follows (weakly: the entry goes with the signal).
const parentsOf = new WeakMap<AbortSignal, readonly AbortSignal[]>();

/**
 * Whether `signal` is `ancestor` or was linked to it (through linkSignals or childSignal, at
 * any depth), so that it aborts whenever `ancestor` does: a caller given such a signal need
 * not link it to `ancestor` again. The explorer client linked every tick's own signal to the
 * shutdown signal anew, 10,000 links a tick, each kept until a collection finalised it.
 */
export function follows(signal: AbortSignal, ancestor: AbortSignal): boolean {
  if (signal === ancestor) return true;
  return parentsOf.get(signal)?.some((parent) => follows(parent, ancestor)) ?? false;
}

/**
 * A signal of its own that follows `parent`, through the parent's one fan-out listener: a
 * loop that waits on it, however many listeners it adds, adds none to the parent. Several
 * loops sharing one signal (seven sink workers, each with a sleep and a rate limiter
 * waiting) passed Node's limit of ten listeners and printed a warning into the JSON log.
 */
export function childSignal(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  parentsOf.set(controller.signal, [parent]);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  return { signal: controller.signal, dispose: onAbort(parent, (reason) => controller.abort(reason)) };
}

// One listener per long-lived signal, fanning out to the calls linked to it: adding an
// EventTarget listener scans the ones already there, so 10,000 calls in flight on the
// shutdown signal made each new call slower (quadratic in all); a Set adds and removes in O(1).
const fanOuts = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function onAbort(signal: AbortSignal, callback: (reason: unknown) => void): () => void {
  let callbacks = fanOuts.get(signal);
  if (callbacks === undefined) {
    const created = new Set<(reason: unknown) => void>();
    callbacks = created;
    fanOuts.set(signal, created);
    signal.addEventListener(
      "abort",
      () => {
        for (const run of [...created]) run(signal.reason);
        created.clear();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(callback);
  return () => set.delete(callback);
}

/**
 * Aborts `controller` when `parent` aborts (at once if it has, with its reason); the listener
 * on `parent` is removed when the controller aborts, so a run that stops leaves none behind.
 */
export function abortWhen(parent: AbortSignal, controller: AbortController): void {
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  controller.signal.addEventListener("abort", () => parent.removeEventListener("abort", onAbort), { once: true });
}
