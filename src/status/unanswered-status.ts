/** What /status says while the store does not answer, from the last body read and what memory holds. */
export interface UnansweredInputs {
  /** The last /status body read in full, and when (undefined: none yet, the store stalled at start). */
  last: { value: Record<string, unknown>; atMs: number } | undefined;
  nowMs: number;
  startedAtMs: number;
  /** The store's reason, first among the reasons ("store: …"). */
  storeReason: string;
  /** The head probe's state: in memory, so current. */
  head: unknown;
  storePath: string;
}

/** The last /status read with what changed since in memory, saying the store is not answering. */
export function unansweredStatus(inputs: UnansweredInputs): Record<string, unknown> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const { nowMs, startedAtMs } = inputs;
  const last = inputs.last?.value;
  const lastReasons = Array.isArray(last?.reasons) ? (last.reasons as string[]).filter((reason) => !reason.startsWith("store:")) : [];
  const lastStore = (last?.store ?? { path: inputs.storePath }) as Record<string, unknown>;
  return {
    // Before anything is read (the store stalled at start): what memory holds, the lists empty.
    sources: [],
    sinks: {},
    alerts: [],
    dead_letters: [],
    dead_letters_total: 0,
    dead_letter_groups: [],
    oldest_pending: {},
    silences: [],
    missed_records: { open: 0, missed_by: { explorer: 0, node: 0 }, latest: [] },
    health: { worst: "unknown", conditions: [] },
    ...last,
    now: iso(nowMs),
    started_at: iso(startedAtMs),
    uptime_seconds: Math.round((nowMs - startedAtMs) / 1000),
    ready: false,
    reasons: [inputs.storeReason, ...lastReasons],
    head: inputs.head,
    read_at: inputs.last === undefined ? null : iso(inputs.last.atMs),
    store: { ...lastStore, answering: false },
  };
}
