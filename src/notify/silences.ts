import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { open, readFile, stat, unlink } from "node:fs/promises";
import { resolve } from "node:path";
import type { Common } from "../common/common.js";
import { KaiawatchError, describeError } from "../common/errors.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { Silence } from "../model/silence.js";
import { writeFileDurably } from "../store/durable-file.js";
import type { Store } from "../store/types.js";
import { readRecordField } from "./grouping.js";

/** The store meta key of the silences the daemon knows (and how many alerts each held back). */
export const SILENCES_META_KEY = "notify.silences";

export type { Silence } from "../model/silence.js";
/**
 * Silences and removals. Merging two sets is a union in which a removal always wins, so
 * sets can be merged in any order and any number of times with the same result (a stale
 * copy of the side file can never bring a removed silence back).
 */
export interface SilenceSet {
  silences: Silence[];
  /** Removed silence id → its expiry: kept until then, dropped afterwards. */
  removed: Record<string, string>;
}

export interface SilenceStatus extends Silence {
  /** Alerts this silence held back (as counted by the daemon that applied it). */
  suppressed: number;
}

export class SilenceError extends KaiawatchError {
  override name = "SilenceError";
}

export const emptySilenceSet = (): SilenceSet => ({ silences: [], removed: {} });

/**
 * The side file next to the store: the CLI cannot write the store while the daemon holds
 * its lock, so `kaiawatch silence` writes here and the daemon merges it into the store.
 */
export function silenceFileOf(storePath: string): string {
  return `${resolve(storePath)}.silences.json`;
}

export function newSilence(input: { rule: string; match: Record<string, string>; forMs: number; reason: string; now: number }): Silence {
  return {
    id: `sil_${randomBytes(4).toString("hex")}`,
    rule: input.rule,
    match: Object.fromEntries(Object.entries(input.match).map(([field, value]) => [field, value.toLowerCase()])),
    reason: input.reason,
    created_at: new Date(input.now).toISOString(),
    expires_at: new Date(input.now + input.forMs).toISOString(),
  };
}

export function isActive(silence: Silence, now: number): boolean {
  return Date.parse(silence.expires_at) > now;
}

export function silenceMatches(silence: Silence, rule: string, alert: AlertDocument): boolean {
  return silenceMatchesRecord(silence, rule, alert.record);
}

/** The same test on the explorer record an alert would carry (`kaiawatch explain` has no alert). */
export function silenceMatchesRecord(silence: Silence, rule: string, record: unknown): boolean {
  if (silence.rule !== rule) return false;
  for (const [field, value] of Object.entries(silence.match)) {
    if (readRecordField(record, field) !== value.toLowerCase()) return false;
  }
  return true;
}

/** The union of the sets without expired silences and removals; a removal beats its silence. */
export function mergeSilenceSets(sets: readonly SilenceSet[], now: number): SilenceSet {
  const removed: Record<string, string> = {};
  for (const set of sets) {
    for (const [id, expires] of Object.entries(set.removed)) {
      if (Date.parse(expires) > now && !(Object.hasOwn(removed, id) && Date.parse(removed[id]!) >= Date.parse(expires))) removed[id] = expires;
    }
  }
  const byId = new Map<string, Silence>();
  for (const set of sets) {
    for (const silence of set.silences) {
      if (Object.hasOwn(removed, silence.id) || !isActive(silence, now)) continue;
      // Ids are random and silences never change, so two copies are equal; should a hand-edited
      // file disagree, the choice must still not depend on the order of the sets.
      const known = byId.get(silence.id);
      if (known === undefined || JSON.stringify(silence) < JSON.stringify(known)) byId.set(silence.id, silence);
    }
  }
  const silences = [...byId.values()].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return { silences, removed };
}

/** Reads a silence set from parsed JSON, keeping only well-formed entries (the file is user-writable). */
export function toSilenceSet(value: unknown): SilenceSet {
  const set = emptySilenceSet();
  if (!isObject(value)) return set;
  if (Array.isArray(value.silences)) {
    for (const item of value.silences) if (isSilence(item)) set.silences.push(item);
  }
  if (isObject(value.removed)) {
    for (const [id, expires] of Object.entries(value.removed)) if (typeof expires === "string" && !Number.isNaN(Date.parse(expires))) set.removed[id] = expires;
  }
  return set;
}

function isSilence(value: unknown): value is Silence {
  if (!isObject(value)) return false;
  const { id, rule, match, reason, created_at, expires_at } = value;
  return (
    typeof id === "string" &&
    typeof rule === "string" &&
    isObject(match) &&
    Object.values(match).every((v) => typeof v === "string") &&
    typeof reason === "string" &&
    typeof created_at === "string" &&
    typeof expires_at === "string" &&
    !Number.isNaN(Date.parse(expires_at))
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The silence set of a side file; a missing file is an empty set. */
export async function readSilenceFile(path: string): Promise<SilenceSet> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptySilenceSet();
    throw new SilenceError("KW_NOTIFY_SILENCE_FILE", `cannot read the silence file ${path}: ${(error as Error).message}`, { cause: error });
  }
  return parseSilenceText(text, path);
}

function parseSilenceText(text: string, path: string): SilenceSet {
  try {
    return toSilenceSet(JSON.parse(text));
  } catch (error) {
    throw new SilenceError("KW_NOTIFY_SILENCE_FILE", `the silence file ${path} is not JSON; fix or remove it`, { cause: error });
  }
}

const LOCK_WAIT_MS = 5_000;
/** A lock older than this was left by a process that died mid-write (a write takes milliseconds). */
const LOCK_STALE_MS = 10_000;

/**
 * Changes the side file under a lock (two `kaiawatch silence` runs at once must not lose
 * each other's change) and replaces it atomically (the daemon never reads half a file).
 * Returns the set written: the change merged with what was there, expired entries dropped.
 */
export async function updateSilenceFile(path: string, change: (set: SilenceSet) => SilenceSet, now: number): Promise<SilenceSet> {
  const lockPath = `${path}.lock`;
  await takeLock(lockPath);
  try {
    const current = await readSilenceFile(path);
    const next = mergeSilenceSets([change(current)], now);
    await writeFileDurably(path, `${JSON.stringify(next, null, 2)}\n`);
    return next;
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}

async function takeLock(lockPath: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockPath, "wx");
      await handle.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new SilenceError("KW_NOTIFY_SILENCE_FILE", `cannot lock the silence file ${lockPath}: ${(error as Error).message}`, { cause: error });
      }
    }
    const age = await stat(lockPath).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > LOCK_STALE_MS) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new SilenceError("KW_NOTIFY_SILENCE_FILE", `the silence file is locked by another kaiawatch silence (${lockPath}); if none runs, remove the lock`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

interface StoredSilences extends SilenceSet {
  /** Silence id → alerts it held back. */
  suppressed: Record<string, number>;
}

/** The silences as the daemon last stored them (for `kaiawatch silence list` beside a running daemon). */
export async function readStoredSilences(store: Store): Promise<{ set: SilenceSet; suppressed: Record<string, number> }> {
  const stored = await store.getMeta<unknown>(SILENCES_META_KEY);
  const suppressed: Record<string, number> = {};
  if (isObject(stored) && isObject(stored.suppressed)) {
    for (const [id, count] of Object.entries(stored.suppressed)) if (typeof count === "number" && Number.isSafeInteger(count)) suppressed[id] = count;
  }
  return { set: toSilenceSet(stored), suppressed };
}

export interface SilenceBookOptions {
  store: Store;
  /** The side file to merge (silenceFileOf(store path)). */
  file: string;
  /** How often the side file is looked at (its size and mtime), at most. Default 500 ms. */
  refreshMs?: number;
}

export interface SilenceBook {
  /** The active silence that holds back this alert of this rule, if any (counted as held back). */
  silencing(rule: string, alert: AlertDocument, now: number): Silence | undefined;
  /** The silences in force at `now`, oldest first, as last read. */
  active(now: number): Silence[];
  /**
   * The silences in force at `now`, oldest first, read for one admission round of the
   * dispatcher: from the store itself when replicas share it (a silence added through any
   * replica or the CLI holds from the next round on), from what the book knows otherwise.
   */
  current(now: number): Promise<Silence[]>;
  /** Counts alerts held back, one per id (an id once per alert it held). */
  noteHeld(silenceIds: readonly string[]): void;
  /** The active silences, oldest first, with their counts (for /status). */
  list(now: number): SilenceStatus[];
  /** Adds a silence (the status API's `silence add` on a running daemon); resolves once the store has it. */
  add(silence: Silence, now: number): Promise<void>;
  /** Removes an active silence; resolves with it once the store has the removal, or undefined when none is active by that id. */
  remove(id: string, now: number): Promise<Silence | undefined>;
  /** Looks at the side file on an interval until stop(), so new silences reach the store (and `silence add` its confirmation) without an alert passing by. */
  start(): void;
  stop(): void;
}

/**
 * The daemon's view of the silences: the store's copy, merged with the side file whenever
 * that changes (checked at most every `refreshMs`, and on every check once that long has
 * passed), so a running daemon picks up `kaiawatch silence add/remove` without a restart.
 * The dispatcher asks for the active silences once per pass, synchronously: the side file
 * is small and only stat(2)ed unless it changed, so synchronous file calls are cheap here.
 */
export async function createSilenceBook(common: Common, options: SilenceBookOptions): Promise<SilenceBook> {
  const { store, file } = options;
  const refreshMs = options.refreshMs ?? 500;
  const logger = common.logger.child({ component: "silences" });
  const stored = await readStoredSilences(store);
  let set = mergeSilenceSets([stored.set], common.now());
  const suppressed = stored.suppressed;
  let seen = "";
  let lastRefresh = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;

  function save(): Promise<void> {
    const counts: Record<string, number> = {};
    for (const silence of set.silences) if (suppressed[silence.id] !== undefined) counts[silence.id] = suppressed[silence.id]!;
    const value: StoredSilences = { ...set, suppressed: counts };
    return store.setMeta(SILENCES_META_KEY, value);
  }

  function persist(): void {
    save().catch((error: unknown) => logger.warn({ err: describeError(error) }, "cannot store the silences; the next change tries again"));
  }

  function refresh(now: number, force = false): void {
    if (!force && now - lastRefresh < refreshMs) return;
    lastRefresh = now;
    let signature: string;
    try {
      const s = statSync(file);
      signature = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") logger.warn({ err: describeError(error) }, "cannot read the silence file");
      signature = "none";
    }
    const expiredSome = set.silences.some((silence) => !isActive(silence, now));
    if (signature === seen && !expiredSome) return;
    let fromFile = emptySilenceSet();
    if (signature !== "none") {
      try {
        fromFile = parseSilenceText(readFileSync(file, "utf8"), file);
      } catch (error) {
        // Keep what we have: a broken file must not lift silences that were in force.
        logger.warn({ err: describeError(error) }, "cannot read the silence file; keeping the silences already known");
        seen = signature;
        return;
      }
    }
    const before = JSON.stringify(set);
    set = mergeSilenceSets([set, fromFile], now);
    seen = signature;
    if (JSON.stringify(set) === before) return;
    logger.info({ silences: set.silences.map((s) => s.id) }, "silences changed");
    persist();
  }

  function active(now: number): Silence[] {
    refresh(now);
    return set.silences.filter((s) => isActive(s, now));
  }

  function noteHeld(silenceIds: readonly string[]): void {
    if (silenceIds.length === 0) return;
    for (const id of silenceIds) suppressed[id] = (suppressed[id] ?? 0) + 1;
    persist();
  }

  return {
    current: async (now) => active(now),
    silencing(rule, alert, now) {
      const silence = active(now).find((s) => silenceMatches(s, rule, alert));
      if (silence !== undefined) noteHeld([silence.id]);
      return silence;
    },
    active,
    noteHeld,
    async add(silence, now) {
      set = mergeSilenceSets([set, { silences: [silence], removed: {} }], now);
      logger.info({ silences: set.silences.map((s) => s.id) }, "silences changed");
      await save();
    },
    async remove(id, now) {
      const known = active(now).find((s) => s.id === id);
      if (known === undefined) return undefined;
      // A tombstone, as the side file keeps: a stale copy of the silence can never bring it back.
      set = mergeSilenceSets([set, { silences: [], removed: { [id]: known.expires_at } }], now);
      logger.info({ silences: set.silences.map((s) => s.id) }, "silences changed");
      await save();
      return known;
    },
    list(now) {
      return active(now).map((s) => ({ ...s, suppressed: suppressed[s.id] ?? 0 }));
    },
    start() {
      if (timer) return;
      timer = setInterval(() => refresh(common.now(), true), refreshMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
