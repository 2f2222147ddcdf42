import type { Store } from "../store/types.js";
import type { Readiness } from "./status-server.js";

/** What readiness reads of the daemon's health monitor (its HealthMonitor satisfies it). */
export interface ProblemsReading {
  evaluate(): Promise<{
    sources: Array<{ state: string }>;
    problems: Array<{ check: string; kind: string; summary: string }>;
    /** Said in a check's detail without failing it (a removed sink's alerts kept). */
    notes?: Array<{ check: string; summary: string }>;
  }>;
}

/**
 * The one verdict of "ready": what /readyz answers and what the heartbeat sink asks before each
 * ping (a heartbeat sent by a daemon that /readyz calls not ready would hide the very wedge it
 * exists to report). 503 only while something needs a person (docs/operations.md, "Readiness"):
 * a failing or stalled source, a stalled sink, the head unreachable, stuck or backwards, the
 * store not writable, the credit budget spent. Retrying and catching up stay ready.
 */
export function createReadiness(parts: { store: Store; health: ProblemsReading }): () => Promise<Readiness> {
  const { store, health } = parts;

  /**
   * The store's check: its last write, and (a shared store, PostgreSQL, may be unreachable
   * with no write failing yet) one small read.
   */
  async function storeCheck(): Promise<Readiness["checks"][string]> {
    const stats = await store.stats();
    const unreachable = await store.countOutbox({ state: "dead" }).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    if (unreachable !== undefined) return { ok: false, detail: `the store ${store.path} cannot be read: ${unreachable}` };
    if (stats.corrupt !== undefined) return { ok: false, detail: stats.corrupt };
    if (stats.lastWriteFailed) return { ok: false, detail: `the last write of ${store.path} failed (${stats.failedWrites} failed writes since start); deliveries wait until it takes writes again, and it retries with the next change` };
    return { ok: true, detail: `${store.path} is writable (${stats.writes} writes since start)` };
  }

  return async function readiness(): Promise<Readiness> {
    const storeReading = await storeCheck();
    const snapshot = await health.evaluate();
    const checks: Readiness["checks"] = {};
    for (const problem of snapshot.problems) {
      const known = checks[problem.check];
      checks[problem.check] = { ok: false, detail: known ? `${known.detail} | ${problem.summary}` : problem.summary };
    }
    for (const note of snapshot.notes ?? []) {
      const known = checks[note.check];
      checks[note.check] = known ? { ok: known.ok, detail: `${known.detail} | ${note.summary}` } : { ok: true, detail: note.summary };
    }
    const counts = new Map<string, number>();
    for (const source of snapshot.sources) counts.set(source.state, (counts.get(source.state) ?? 0) + 1);
    checks.sources ??= { ok: true, detail: `sources: ${[...counts].map(([state, n]) => `${n} ${state}`).join(", ") || "none"}` };
    // The store's own reading wins over the monitor's (which sees only failed writes, not an unreachable server).
    if (!storeReading.ok || checks.store === undefined) checks.store = storeReading;
    checks.head ??= { ok: true, detail: "the chain head moves" };
    const reasons = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.detail}`);
    return { ready: reasons.length === 0, reasons, checks };
  };
}
