import { randomBytes } from "node:crypto";
import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { AlertDocument } from "../model/alert-document.js";
import type { Silence } from "../model/silence.js";
import type { SilenceStore, StoredSilence } from "../store/silence-store.js";
import { readRecordField } from "./grouping.js";
import { labelsOfAlert } from "./labels.js";
import { matches, parseMatchers, type Matcher } from "./matchers.js";

export type { Silence } from "../model/silence.js";

export interface SilenceStatus extends Silence {
  /** Alerts this silence held back (counted by every process that applied it). */
  suppressed: number;
}

export function newSilence(input: { rule?: string; match: Record<string, string>; matchers?: readonly Matcher[]; forMs: number; reason: string; now: number }): Silence {
  const matchers = input.matchers ?? [];
  return {
    id: `sil_${randomBytes(4).toString("hex")}`,
    ...(input.rule === undefined ? {} : { rule: input.rule }),
    match: Object.fromEntries(Object.entries(input.match).map(([field, value]) => [field, value.toLowerCase()])),
    ...(matchers.length === 0 ? {} : { matchers: matchers.map(String) }),
    reason: input.reason,
    created_at: new Date(input.now).toISOString(),
    expires_at: new Date(input.now + input.forMs).toISOString(),
  };
}

export function isActive(silence: Silence, now: number): boolean {
  return Date.parse(silence.expires_at) > now;
}

/**
 * Why a silence could not be made, or undefined: it must name a rule or a label matcher (a
 * silence of everything is refused), and, as Alertmanager refuses it, label matchers that all
 * match the empty string would hold every alert without those labels too.
 */
export function silenceProblem(input: { rule?: string; matchers: readonly Matcher[] }): string | undefined {
  if (input.rule === undefined && input.matchers.length === 0) return "name label matchers (e.g. 'severity=\"warning\"') or a rule (--rule NAME): a silence of every alert is refused";
  if (input.matchers.length > 0 && input.matchers.every((m) => m.test(""))) return "at least one matcher must not match the empty string (as Alertmanager requires): these would hold every alert without those labels too";
  return undefined;
}

/** A silence's label matchers, parsed once per text; undefined when they do not read (a row no kaiawatch wrote: it holds nothing). */
const parsedMatchers = new Map<string, Matcher[] | undefined>();
export function silenceMatchers(silence: Silence): Matcher[] | undefined {
  const texts = silence.matchers ?? [];
  if (texts.length === 0) return [];
  const key = JSON.stringify(texts);
  if (!parsedMatchers.has(key)) {
    if (parsedMatchers.size > 10_000) parsedMatchers.clear();
    parsedMatchers.set(key, readMatchers(texts));
  }
  return parsedMatchers.get(key);
}

function readMatchers(texts: readonly string[]): Matcher[] | undefined {
  try {
    return texts.flatMap(parseMatchers);
  } catch {
    return undefined;
  }
}

/** Whether the silence holds this alert of this rule: its rule (if it names one), its record fields and its label matchers. */
export function silenceMatches(silence: Silence, rule: string, alert: AlertDocument): boolean {
  const matchers = silenceMatchers(silence);
  return matchers !== undefined && silenceMatchesRecord(silence, rule, alert.record) && matches(matchers, labelsOfAlert(alert));
}

/** The rule and record-field part of the test on the explorer record an alert would carry (`kaiawatch explain` adds the labels). */
export function silenceMatchesRecord(silence: Silence, rule: string, record: unknown): boolean {
  if (silence.rule !== undefined && silence.rule !== rule) return false;
  for (const [field, value] of Object.entries(silence.match)) {
    if (readRecordField(record, field) !== value.toLowerCase()) return false;
  }
  return true;
}

/** A silence from parsed JSON (the status API's body), or undefined when it is not well formed. */
export function readSilence(value: unknown): Silence | undefined {
  if (!isObject(value)) return undefined;
  const { id, rule, match, matchers, reason, created_at, expires_at } = value;
  const texts = Array.isArray(matchers) && matchers.every((m) => typeof m === "string") ? (matchers as string[]) : undefined;
  const parsed = texts === undefined ? undefined : readMatchers(texts);
  const ok =
    typeof id === "string" &&
    (rule === undefined || typeof rule === "string") &&
    (matchers === undefined || (parsed !== undefined && silenceProblem({ ...(rule === undefined ? {} : { rule: rule as string }), matchers: parsed }) === undefined)) &&
    (rule !== undefined || (parsed?.length ?? 0) > 0) &&
    isObject(match) &&
    Object.values(match).every((v) => typeof v === "string") &&
    typeof reason === "string" &&
    typeof created_at === "string" &&
    typeof expires_at === "string" &&
    !Number.isNaN(Date.parse(expires_at));
  if (!ok) return undefined;
  return { id, ...(rule === undefined ? {} : { rule: rule as string }), match: match as Record<string, string>, ...(texts === undefined || texts.length === 0 ? {} : { matchers: texts }), reason, created_at, expires_at };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A silence without its count. */
export function withoutCount({ suppressed: _suppressed, ...silence }: StoredSilence): Silence {
  return silence;
}

export interface SilenceBookOptions {
  /** The store's silences (Backend.silences). */
  silences: SilenceStore;
  /** How often the status page's view (`list`) is read again when no admission round reads it. Default 2 s. */
  refreshMs?: number;
}

export interface SilenceBook {
  /** The active silence that holds back this alert of this rule, if any (counted as held back). */
  silencing(rule: string, alert: AlertDocument, now: number): Silence | undefined;
  /** The silences in force at `now`, oldest first, as last read. */
  active(now: number): Silence[];
  /**
   * The silences in force at `now`, oldest first, read from the store for one admission round
   * of the dispatcher: a silence added through the CLI or any replica holds from the next round.
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
  /** Reads the store on an interval until stop(), so that /status shows silences added elsewhere without an alert passing by. */
  start(): void;
  stop(): void;
}

/**
 * The daemon's view of the silences kept in the store (both backends keep them as rows,
 * which `kaiawatch silence` writes too). The dispatcher reads them at every admission round
 * that has due entries (`current`), so there is no cache to go stale; counts of held-back
 * alerts are added in the store, so they sum over replicas.
 */
export async function createSilenceBook(common: Common, options: SilenceBookOptions): Promise<SilenceBook> {
  const table = options.silences;
  const refreshMs = options.refreshMs ?? 2_000;
  const logger = common.logger.child({ component: "silences" });
  let known: StoredSilence[] = await table.active(common.now());
  let seen = signature(known);
  let timer: NodeJS.Timeout | undefined;

  async function current(now: number): Promise<Silence[]> {
    known = await table.active(now);
    const next = signature(known);
    if (next !== seen) logger.info({ silences: known.map((s) => s.id) }, "silences changed");
    seen = next;
    return known.map(withoutCount);
  }

  function active(now: number): Silence[] {
    return known.filter((s) => isActive(s, now)).map(withoutCount);
  }

  function noteHeld(silenceIds: readonly string[]): void {
    if (silenceIds.length === 0) return;
    const held = new Map<string, number>();
    for (const id of silenceIds) held.set(id, (held.get(id) ?? 0) + 1);
    for (const silence of known) silence.suppressed += held.get(silence.id) ?? 0;
    // A count is a statistic: losing one to an outage holds back no alert and sends none.
    table.count(held).catch((error: unknown) => logger.warn({ err: describeError(error) }, "cannot count the alerts held back by silences"));
  }

  return {
    current,
    active,
    noteHeld,
    silencing(rule, alert, now) {
      const silence = active(now).find((s) => silenceMatches(s, rule, alert));
      if (silence !== undefined) noteHeld([silence.id]);
      return silence;
    },
    async add(silence, now) {
      await table.add(silence);
      await current(now);
    },
    async remove(id, now) {
      const removed = await table.remove(id, now);
      await current(now);
      return removed;
    },
    list(now) {
      return known.filter((s) => isActive(s, now)).map((s) => ({ ...s }));
    },
    start() {
      if (timer) return;
      timer = setInterval(() => {
        current(common.now()).catch((error: unknown) => logger.debug({ err: describeError(error) }, "cannot read the silences; the next look tries again"));
      }, refreshMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

function signature(silences: readonly Silence[]): string {
  return silences.map((s) => s.id).join(",");
}
