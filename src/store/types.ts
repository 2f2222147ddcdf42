import type { AlertDocument } from "../model/alert-document.js";
import type { OutboxEntry, OutboxState } from "../model/outbox-entry.js";
import type { AttemptOutcome } from "../model/attempt-outcome.js";
import type { LeaseResource } from "./resources.js";
import type { WitnessRole } from "../model/witness-role.js";

export type { WitnessRole };

/** Where a source has got to. `block` is the last fully processed block, inclusive. */
export interface Cursor {
  /** The source key from the plan: one cursor per source. */
  key: string;
  watch: string;
  /** The record family the source produces. */
  source: string;
  /** A human description of the source (endpoint, address, filter) for `kaiawatch cursors`. */
  description: string;
  block: number;
  updated_at: string;
  /**
   * The key of the cursor this one follows: it reads (getCursor, listCursors) at the higher of
   * its own block and that cursor's. A watch's position under its own key while a shared
   * source serves it follows the source's cursor (Store.followCursor), so each window the
   * source commits moves every position it serves without a write per watch.
   */
  follows?: string;
  /**
   * Read only (getCursor and listCursors fill it; writes ignore it): the generation of the
   * cursors that follow this one (Store.followCursor); absent while none ever has.
   */
  followers?: number;
}

/**
 * A change to one outbox entry. Allowed transitions:
 * - delivered: pending → delivered (again on a delivered entry: no change); with `suppressed`,
 *   the entry was held back and never sent: the store keeps a note of why beside it (see
 *   `suppressions`), removed with the entry;
 * - failed: pending → pending with the error and the next attempt time;
 * - defer: pending → pending with a later next attempt time and a note, attempts unchanged (not an attempt);
 * - dead: pending → dead (again on a dead entry: no change);
 * - requeue: dead → pending, attempts reset, group cleared (on a pending entry: no change);
 * - group: sets the digest group of a pending entry.
 * Anything else is a programming error: the whole batch is refused and nothing changes.
 */
export type OutboxChange =
  | { id: string; kind: "delivered"; at: string; suppressed?: SuppressionReason; history?: AttemptNote }
  | { id: string; kind: "failed"; at: string; error: string; next_attempt_at: string; history?: AttemptNote }
  | { id: string; kind: "dead"; at: string; reason: string; history?: AttemptNote }
  | { id: string; kind: "requeue"; at: string }
  /** A pending entry waits until `until` without an attempt being counted (a route's time interval mutes it), `note` its last_error; its history row is "suppressed". */
  | { id: string; kind: "defer"; at: string; until: string; note: string; history?: AttemptNote }
  | { id: string; kind: "group"; group_id: string };

/**
 * One send of an entry (or its hold by a silence or a cooldown), carried by the change that
 * records its outcome: the store adds it to the delivery history in the same write as the
 * change (`history` on a delivered, failed or dead change), so the history never says what the
 * outbox does not, nor the other way round. The entry's alert, sink and rule come from the
 * outbox row; the time is the change's `at`.
 */
export interface AttemptNote {
  /** The Delivery id the receiver saw: the entry's id, or its digest's group id. */
  delivery_id: string;
  /** 1 for the first try (Delivery.attempt); a suppression counts as the attempt it replaced. */
  attempt: number;
  /** The receiver's HTTP status code, where there was one. */
  status?: number;
  /** How long the send took, in milliseconds. */
  latency_ms?: number;
  /** What failed, already redacted; the store keeps at most ATTEMPT_ERROR_MAX characters. */
  error?: string;
}

export type { AttemptOutcome };

/** One row of the delivery history (`kaiawatch history`, GET /api/history). */
export interface DeliveryAttempt {
  at: string;
  alert_id: string;
  sink: string;
  rule: string;
  delivery_id: string;
  attempt: number;
  outcome: AttemptOutcome;
  status?: number;
  latency_ms?: number;
  error?: string;
}

/** Which attempts a history listing returns; every field narrows it. */
export interface AttemptFilter {
  alertId?: string;
  sink?: string;
  rule?: string;
  outcome?: AttemptOutcome;
  /** At or after this ISO-8601 instant. */
  since?: string;
  /** At or before this ISO-8601 instant. */
  until?: string;
  /** At most this many, the newest. */
  limit?: number;
}

/** Why an entry was marked delivered without a send. */
export type SuppressionReason = "cooldown" | "silence" | "inhibited" | "muted";

export interface SuppressedNote {
  at: string;
  reason: SuppressionReason;
}

/**
 * When an alert of one (sink, rule, cooldown key) was last let through. Each is its own
 * row: replicas delivering different sinks never overwrite each other's stamps.
 */
export interface CooldownStamp {
  sink: string;
  rule: string;
  /** The cooldown key's value ("" when the rule's cooldown has no key). */
  key: string;
  /** Milliseconds since the epoch. */
  at: number;
  /**
   * The single alert (outbox entry id) that started it; absent for a digest's. That entry is
   * not held back by its own stamp: a crash between stamping and its first send must not
   * turn it into a suppressed alert when it is looked at again.
   */
  entryId?: string;
}

/**
 * The open episode of a balance rule for one (rule, address, asset): the firing alert (its id
 * is the episode's, and its resolve's id is derived from it) and the readings in a row
 * without the condition. One row per key: whoever reads the balances, every replica and
 * every restart goes on with the same episode, never opens a second.
 */
export interface BalanceEpisode {
  rule: string;
  /** Lowercase. */
  address: string;
  /** "KAIA" or a token contract, lowercase. */
  asset: string;
  alert: AlertDocument;
  clear: number;
  /** Reminders sent so far (the last one's id is reminderAlertId(alert.id, repeats)); 0 before the first. */
  repeats: number;
  /** When the last reminder was decided (ISO-8601 UTC); null before the first (the next is due from alert.created_at). */
  reminded_at: string | null;
}

/**
 * A compare-and-set of one (rule, address, asset)'s episode: `expect` is the id of the
 * episode the writer read (null: it read none), `next` the episode after the change (null
 * closes it). A change whose `expect` is not what the store holds is a conflict.
 */
export interface BalanceEpisodeChange {
  rule: string;
  address: string;
  asset: string;
  expect: string | null;
  next: { alert: AlertDocument; clear: number; repeats: number; reminded_at: string | null } | null;
}

/** A block and its timestamp (seconds since the epoch). */
export interface BlockTime {
  block: number;
  time: number;
}

/**
 * What an absence rule (`expect`) has observed, one row per rule, written in the same
 * commit as the cursor advance of the window it observed (docs/absence.md):
 * - `since`: where observation began (or began again after blocks it did not see): no
 *   alert before a whole window of block time after it has been observed;
 * - `through`: the last block observed; a re-scan of blocks up to it (a rewind) neither
 *   counts their records again nor decides anything;
 * - `recent`: the newest matching records by block (block, time, how many in it), just
 *   enough of them to hold `at_least` records, oldest first; `at_least`: the count they
 *   were kept for (a rule that now expects more has not kept enough to count them);
 * - `episode`: the firing alert of the open absence (its id is the episode's), or null.
 */
export interface AbsenceState {
  rule: string;
  since: BlockTime;
  through: number;
  recent: Array<BlockTime & { count: number }>;
  at_least: number;
  episode: AlertDocument | null;
}

/**
 * That one reader of a watch under `source: both` found an alert (docs/operations.md, "Two witnesses"),
 * written by commitWindow with the window that found it. When the other reader finds the
 * same alert id, both rows go: the table holds only what one reader has seen and the other
 * not (yet). A witness the other reader has passed without finding it is marked missed
 * (settleWitnesses) and kept as the record of the report. The record is described by its
 * identity key and summary line only: no document, no secret.
 */
export interface Witness {
  alert_id: string;
  role: WitnessRole;
  watch: string;
  /** The record family. */
  family: string;
  rule: string;
  block: number;
  /** The record's identity key (the alert id is derived from it and the rule). */
  record_key: string;
  summary: string;
  transaction_hash: string | null;
  /** When the window that found it was committed (ISO-8601 UTC). */
  seen_at: string;
  /** When it was reported missed by the other reader; absent while open. */
  missed_at?: string;
}

/** One witness the other reader missed, with the outbox entries of its operational alert. */
export interface MissedWitness {
  alert_id: string;
  role: WitnessRole;
  entries: OutboxEntry[];
}

export interface OutboxFilter {
  sink?: string;
  state?: OutboxState;
  /** Only entries whose next_attempt_at is at or before this ISO-8601 UTC instant. */
  dueBefore?: string;
  /** Only the members of this digest. */
  groupId?: string;
  /** At most this many entries (the first ones in the listing's order). */
  limit?: number;
  /** Newest first instead of oldest first: with `limit`, the most recently added entries. */
  newestFirst?: boolean;
}

export interface OutboxCountFilter {
  sink?: string;
  state?: OutboxState;
  /** Only entries attempted at least once (true: for pending, the ones retrying) or never (false). */
  retrying?: boolean;
}

/** How many entries one sink has in one state; `retrying` of them were attempted at least once. */
export interface OutboxCount {
  sink: string;
  state: OutboxState;
  count: number;
  retrying: number;
}

export interface StoreStats {
  /** Successful commits (durable writes) since the store was opened. */
  writes: number;
  /** Failed commits since the store was opened. */
  failedWrites: number;
  /** The last commit failed (its changes were rolled back): the store is not writable now. */
  lastWriteFailed: boolean;
  /** Bytes the store takes on disk (its files together) after the last commit (or at open). */
  bytes: number;
  outbox: number;
  /** Alert documents held: each once, however many outbox entries (one per sink) deliver it. */
  alerts: number;
  cursors: number;
  /**
   * Set (a KW_STORE_CORRUPT message) once the backend found its data damaged while running:
   * it writes no more (lastWriteFailed stays true) until it is repaired and kaiawatch restarted.
   */
  corrupt?: string;
}

/**
 * The persistent state of kaiawatch behind a narrow interface with two implementations: the
 * embedded SQLite file and PostgreSQL shared by replicas. Reads return promises, because the
 * PostgreSQL store is read over the network and cannot answer from memory (the SQLite store
 * answers with resolved promises). A listing of the outbox costs what it returns (use
 * `limit`), and counting costs nothing per entry. Every mutation applies at once (the next
 * read sees it) and resolves when it is durable; a mutation whose write fails is undone and
 * rejects. Returned objects are copies.
 */
export interface Store {
  readonly path: string;
  readonly readOnly: boolean;
  getCursor(key: string): Promise<Cursor | undefined>;
  listCursors(): Promise<Cursor[]>;
  /** Sets a cursor to any block, also backwards (CLI rewind and skip); never below 0. */
  setCursor(cursor: Cursor): Promise<void>;
  /**
   * An operator's move of a cursor (`cursors --set`, `POST /api/cursors`): setCursor that
   * returns the block before and, where replicas run (PostgreSQL), also fences the source's
   * holder so that a window it is committing from the old position cannot undo the move.
   */
  moveCursor(cursor: Cursor): Promise<{ before?: number }>;
  /**
   * Makes `followers` (each written as given) follow `source`'s cursor (see Cursor.follows),
   * in one write: every other cursor that followed it stops following it, at the block it read
   * as. The cursors of setCursor, moveCursor and commitWindow follow nothing: writing one that
   * followed a source (an operator's move of a watch's position) is also a change of that
   * source's followers. Returns their generation (Cursor.followers), which every such change
   * raises: a caller that reads back the generation it was given knows nobody changed them since.
   * commitWindow on a follower is a caller's mistake: it is set (setCursor) first.
   */
  followCursor(input: { source: string; followers: readonly Cursor[] }): Promise<{ generation: number }>;
  /**
   * The atomic step of guarantee 1: the cursor advance and the window's new outbox entries
   * in one write. Entries whose id already exists (a re-scan after a rewind or a crash) are
   * not added again. A cursor behind the stored one is refused (KW_STORE_CURSOR_BACKWARDS).
   * A window without entries resolves at once: its cursor advance becomes durable with the
   * next write or flush() (a crash before that re-scans blocks that held no alert).
   * With `epoch` (a replica's lease on the source, see ownership.ts) the write is fenced:
   * refused with KW_STORE_LEASE_LOST unless the lease is still this replica's at that epoch.
   * The file store has no leases and ignores it. `absences`: see listAbsences. `witnesses`:
   * what the window found for watches under `source: both` (see Witness), written with it.
   */
  commitWindow(input: { cursor: Cursor; entries: OutboxEntry[]; epoch?: number; absences?: readonly AbsenceState[]; witnesses?: readonly Witness[] }): Promise<{ added: number }>;
  /**
   * The witnesses of `source: both` watches (see Witness): the open ones (`missed: false`),
   * lowest block first, or those reported missed, most recently reported first.
   */
  listWitnesses(filter: { missed: boolean; limit?: number }): Promise<Witness[]>;
  /** How many witnesses are open, and how many were reported missed, by the role that saw them. */
  countWitnesses(): Promise<{ open: number; missed: Record<WitnessRole, number> }>;
  /**
   * The audit's verdict in one write: each open witness in `missed` whose alert the other
   * role has witnessed meanwhile (two readers committing at once) is removed with its
   * partner; each other one is marked missed at `at` and its entries added, once: a witness
   * no longer open (another replica settled it first) adds nothing. Returns those marked here.
   */
  settleWitnesses(input: { missed: readonly MissedWitness[]; at: string }): Promise<{ marked: Array<Pick<Witness, "alert_id" | "role">>; added: number }>;
  /** Removes witnesses reported missed before `olderThan` (ISO), at most `limit` of them; returns how many. */
  pruneWitnesses(olderThan: string, limit?: number): Promise<number>;
  /**
   * The absence rules' states (one per rule; see AbsenceState), written by commitWindow's
   * `absences` (each replaces its rule's row, in the window's own write, so that what a
   * rule observed never runs ahead of or behind the cursor). Without `rules`, every one.
   */
  listAbsences(rules?: readonly string[]): Promise<AbsenceState[]>;
  /**
   * Adds outbox entries that belong to no source's window (kaiawatch's own operational
   * alerts, `kaiawatch replay --send`) without touching any cursor; like commitWindow, an
   * entry whose id exists is not added again.
   */
  enqueue(entries: OutboxEntry[]): Promise<{ added: number }>;
  /** Every open balance episode, by rule, address and asset. */
  listBalanceEpisodes(): Promise<BalanceEpisode[]>;
  /**
   * One balance reading's outcome in one write: the episodes it opens, carries on or closes,
   * and the outbox entries of the alerts it decided (an id the outbox has is not added again).
   * All or nothing: a change whose `expect` does not match the stored episode refuses the
   * whole write with KW_STORE_EPISODE_CONFLICT (another writer decided first), so an episode
   * is opened once and resolved once. With `lease` (the replica's lease on the balance
   * watch) the write is fenced as commitWindow's: refused with KW_STORE_LEASE_LOST unless the
   * lease is still this replica's at that epoch. The file store has no leases and ignores it.
   */
  commitBalanceEpisodes(input: { changes: readonly BalanceEpisodeChange[]; entries: OutboxEntry[]; lease?: { resource: LeaseResource; epoch: number } }): Promise<{ added: number }>;
  /** Matching entries, oldest first (in the order they were added) unless `newestFirst`. */
  listOutbox(filter?: OutboxFilter): Promise<OutboxEntry[]>;
  /** How many entries match. */
  countOutbox(filter?: OutboxCountFilter): Promise<number>;
  /** The number of entries by sink and state (only pairs that have entries). */
  outboxCounts(): Promise<OutboxCount[]>;
  /** The earliest next_attempt_at of the sink's pending entries that falls after `after` (ISO), if any. */
  nextAttemptAfter(sink: string, after: string): Promise<string | undefined>;
  /**
   * Many changes in one write; all or nothing. With `durable: false` the changes apply at
   * once and the promise resolves without waiting for them to be durable: they go with the
   * next commit, at the latest a few milliseconds later (flush() waits for them). For
   * changes a crash may lose at no cost, such as a delivery's outcome (the alert is sent
   * again under its id).
   */
  updateOutbox(changes: OutboxChange[], options?: { durable?: boolean }): Promise<void>;
  /**
   * Removes delivered entries delivered before `olderThan` (ISO), at most `limit` of them
   * (the oldest), so that a large backlog of history is pruned in steps; returns how many.
   */
  pruneDelivered(olderThan: string, limit?: number): Promise<number>;
  /**
   * The delivery history: attempts matching the filter, newest first (by time, then by the
   * order they were recorded). Each was written with the outbox change it belongs to.
   */
  listAttempts(filter?: AttemptFilter): Promise<DeliveryAttempt[]>;
  /**
   * Removes attempts made before `olderThan` (ISO), at most `limit` of them (the oldest):
   * the history is kept for the outbox's retention, pruned in steps as the outbox is.
   */
  pruneAttempts(olderThan: string, limit?: number): Promise<number>;
  /** The stored stamps of these (rule, key) pairs of one sink; pairs without a stamp are left out. */
  readCooldowns(sink: string, keys: ReadonlyArray<{ rule: string; key: string }>): Promise<CooldownStamp[]>;
  /**
   * Writes stamps, one row each, atomically per stamp against other replicas: a stamp older
   * than the stored one of its key is ignored (a stamp never goes back in time), so two
   * writers lose neither's stamps. Resolves when durable.
   */
  writeCooldowns(stamps: readonly CooldownStamp[]): Promise<void>;
  /** Removes stamps older than `before` (ms since the epoch); returns how many. */
  pruneCooldowns(before: number): Promise<number>;
  /** The suppression notes of these entries (entries without one are left out). */
  suppressions(entryIds: readonly string[]): Promise<Record<string, SuppressedNote>>;
  /**
   * The stored value (the SQLite store answers with the value itself, not a copy: treat it as
   * read-only). Features read theirs through a typed slot (meta-slot.ts: readMeta), which
   * checks it against its schema.
   */
  getMeta(key: string): Promise<unknown>;
  /** Stores a JSON value (a copy of it); `undefined` removes the key. Features write through their slot (writeMeta). */
  setMeta(key: string, value: unknown): Promise<void>;
  /** Resolves when everything mutated so far is durable (retrying a write that failed). */
  flush(): Promise<void>;
  /** Flushes, releases the lock; mutations afterwards are refused. */
  close(): Promise<void>;
  /** Answers also while a shared store is unreachable (with the counts last read). */
  stats(): Promise<StoreStats>;
  /**
   * Whether the last write failed (stats().lastWriteFailed), from memory: the poller asks it
   * before every window, where stats() would cost a query of the whole database on PostgreSQL.
   */
  writeFailing(): boolean;
}

/**
 * Faults a test injects into the file store's writes (OpenBackendOptions.faults). Each runs on
 * the main thread inside the write, as a disk would hold it: `inCommit` after the write
 * started and before SQLite's COMMIT (e.g. Atomics.wait: a frozen disk holds the thread the
 * same way, better-sqlite3 being synchronous).
 */
export interface StoreFaults {
  inCommit?(): void;
}
