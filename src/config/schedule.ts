import { Cron, CronPattern } from "croner";

/**
 * `schedule: head`: the source ticks when the chain head (minus lag_blocks) passes its
 * cursor, read over JSON-RPC every `chain.head_interval`, instead of at wall-clock times.
 */
export const HEAD_SCHEDULE = "head";

/** Every second: what a head-triggered source costs at one block a second (one tick a block), and how it is costed. */
export const EVERY_SECOND = "* * * * * *";

/**
 * The ways of writing "every second" that `kaiawatch plan` points to `schedule: head`, which
 * costs the same there (one request per new block) and delivers within the head interval
 * instead of half a second on average. Not switched for the user: a clock schedule stays a
 * clock (docs/head-schedule.md says why head is not the default).
 */
export function isEverySecond(schedule: string): boolean {
  const fields = schedule.trim().split(/\s+/);
  return fields.length === 6 && (fields[0] === "*" || fields[0] === "*/1") && fields.slice(1).every((f) => f === "*");
}

export function isHeadSchedule(schedule: string): boolean {
  return schedule === HEAD_SCHEDULE;
}

/** The croner pattern a schedule is costed with: a head-triggered source as every second. */
export function costedPattern(schedule: string): string {
  return isHeadSchedule(schedule) ? EVERY_SECOND : schedule;
}

/**
 * A schedule, compiled once from the config: what the engine and the balance monitor run, and
 * what the credit planner lays out over a day. Croner is constructed only in this file (a
 * paused Cron to check and match, a running one per job), so that every schedule is read with
 * the same options: UTC, six fields.
 */
export interface Schedule {
  /** As written: a croner pattern or "head". */
  readonly pattern: string;
  /** `schedule: head`: ticks on the chain head, not on the clock (no job of its own). */
  readonly head: boolean;
  /** The pattern's second, minute and hour tables (a head schedule: every second, as it is costed). */
  readonly tables: Pick<CronPattern, "second" | "minute" | "hour">;
  /** True when the date's day fields (day of month, month, weekday, L, W, #) and its time select it, in UTC. */
  matches(date: Date): boolean;
  /**
   * Calls `fire` at every time of the pattern until stopped. `protect`: a firing still running
   * (its returned promise pending) makes croner skip the next one.
   */
  start(fire: () => void | Promise<void>, options?: { protect?: boolean }): { stop(): void };
}

export type ScheduleResult = { ok: true; schedule: Schedule } | { ok: false; problem: string };

/**
 * Checks and compiles a schedule. Schedules carry a seconds field: a five-field pattern is
 * refused because "*\/10 * * * *" would silently mean every ten minutes to someone who meant
 * every ten seconds.
 */
export function compileSchedule(pattern: string): ScheduleResult {
  const fields = pattern.trim().split(/\s+/).filter((f) => f !== "");
  if (!isHeadSchedule(pattern) && !pattern.trim().startsWith("@") && fields.length === 5) {
    return { ok: false, problem: `a schedule has 6 fields, seconds first (e.g. "0 ${pattern.trim()}" or "*/10 * * * * *"); this one has 5` };
  }
  // croner takes a seventh field, the year: "… 2099" would silently never fire before
  // then. The message promises six fields, so six it is.
  if (!isHeadSchedule(pattern) && !pattern.trim().startsWith("@") && fields.length !== 6) {
    return { ok: false, problem: `a schedule has 6 fields, seconds first (e.g. "*/10 * * * * *"); this one has ${fields.length}` };
  }
  const costed = costedPattern(pattern);
  let paused: Cron;
  try {
    paused = cronOf(costed, { paused: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: `not a schedule: ${message.replace(/^CronPattern:\s*/, "")}` };
  }
  if (paused.nextRun() === null) return { ok: false, problem: "this schedule never fires" };
  // Read by the credit planner only: parsed when first asked (the schema checks every watch's schedule).
  let tables: CronPattern | undefined;
  return {
    ok: true,
    schedule: {
      pattern,
      head: isHeadSchedule(pattern),
      get tables() {
        return (tables ??= new CronPattern(costed, "UTC"));
      },
      matches: (date) => paused.match(date),
      start(fire, options = {}) {
        if (isHeadSchedule(pattern)) throw new Error('schedule "head" ticks on the chain head: it has no clock job');
        const job = cronOf(costed, { protect: options.protect === true }, () => fire());
        return { stop: () => job.stop() };
      },
    },
  };
}

/** A schedule the config check has passed, compiled (one that fails it here is a wiring mistake). */
export function checkedSchedule(pattern: string): Schedule {
  const compiled = compileSchedule(pattern);
  if (!compiled.ok) throw new Error(`schedule "${pattern}" was not checked: ${compiled.problem}`);
  return compiled.schedule;
}

/** The one place a Cron is constructed: UTC always. */
function cronOf(pattern: string, options: { paused?: boolean; protect?: boolean }, fire?: () => void | Promise<void>): Cron {
  return new Cron(pattern, { timezone: "UTC", ...options }, fire);
}

/** Why `pattern` is not a usable schedule, or undefined. */
export function scheduleProblem(pattern: string): string | undefined {
  const compiled = compileSchedule(pattern);
  return compiled.ok ? undefined : compiled.problem;
}
