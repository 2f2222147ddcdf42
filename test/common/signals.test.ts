import { getEventListeners } from "node:events";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { childSignal, follows, linkSignals } from "../../src/common/signals.js";
import { callerSignals } from "../../src/explorer/caller-signals.js";

/**
 * Every explorer call links the process's shutdown signal with its caller's. Thousands of
 * calls in flight at once (a tick of 10,000 sources) must not pile listeners on the shared
 * signal, and a shutdown must still reach every call still running, and only those.
 */
describe("linkSignals", () => {
  it("aborts every call still linked when a shared signal aborts, with its reason, and no call already done", () => {
    const shutdown = new AbortController();
    const caller = new AbortController();
    const links = Array.from({ length: 5 }, () => linkSignals(shutdown.signal, caller.signal));
    links[1]!.dispose();
    links[3]!.dispose();
    const reason = new Error("stopping");
    shutdown.abort(reason);
    expect(links.map((l) => l.signal.aborted)).toEqual([true, false, true, false, true]);
    expect(links[0]!.signal.reason).toBe(reason);
    // Linking to a signal that has aborted already gives an aborted signal at once.
    expect(linkSignals(shutdown.signal, caller.signal).signal.aborted).toBe(true);
  });

  it("follows whichever signal aborts first", () => {
    const shutdown = new AbortController();
    const caller = new AbortController();
    const link = linkSignals(shutdown.signal, caller.signal);
    caller.abort("timeout");
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe("timeout");
  });

  it("keeps one listener on a shared signal however many calls are linked to it", () => {
    const shutdown = new AbortController();
    const links = Array.from({ length: 2_000 }, () => linkSignals(shutdown.signal, new AbortController().signal));
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(1);
    for (const link of links) link.dispose();
    expect(getEventListeners(shutdown.signal, "abort").length).toBeLessThanOrEqual(1);
    shutdown.abort();
    expect(links.some((l) => l.signal.aborted)).toBe(false);
  });
});

describe("follows", () => {
  it("knows a signal linked to another at any depth, so the client links a tick's signal to the shutdown signal only once", () => {
    const shutdown = new AbortController().signal;
    const engine = linkSignals(shutdown, new AbortController().signal).signal;
    const tick = linkSignals(engine, new AbortController().signal).signal;
    const worker = childSignal(tick).signal;
    expect(follows(shutdown, shutdown)).toBe(true);
    expect(follows(tick, shutdown)).toBe(true);
    expect(follows(worker, shutdown)).toBe(true);
    expect(follows(shutdown, tick)).toBe(false);
    expect(follows(AbortSignal.any([shutdown]), shutdown)).toBe(false); // not linked through linkSignals: linked again, which is safe
    expect(follows(new AbortController().signal, shutdown)).toBe(false);
  });
});

describe("callerSignals", () => {
  it("hands undici a tick's signal on which any number of requests may wait without Node's listener warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const shutdown = new AbortController();
      const tick = linkSignals(shutdown.signal, new AbortController().signal);
      const handed = callerSignals(shutdown.signal)(tick.signal);
      // The tick already follows the shutdown signal: it is handed on as it is, not linked again.
      expect(handed).toBe(tick.signal);
      // undici adds one listener per request in flight; a catch-up keeps dozens in flight.
      for (let i = 0; i < 40; i++) handed.addEventListener("abort", () => {});
      expect(getEventListeners(handed, "abort")).toHaveLength(40);
      await nextTurn(); // Node emits its warnings on a later turn.
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
