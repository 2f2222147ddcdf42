import { Cron } from "croner";

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
 * Why `pattern` is not a usable schedule, or undefined. Schedules carry a seconds field:
 * a five-field pattern is refused because "*\/10 * * * *" would silently mean every ten
 * minutes to someone who meant every ten seconds.
 */
export function scheduleProblem(pattern: string): string | undefined {
  if (isHeadSchedule(pattern)) return undefined;
  const fields = pattern.trim().split(/\s+/).filter((f) => f !== "");
  if (!pattern.trim().startsWith("@") && fields.length === 5) {
    return `a schedule has 6 fields, seconds first (e.g. "0 ${pattern.trim()}" or "*/10 * * * * *"); this one has 5`;
  }
  // croner takes a seventh field, the year: "… 2099" would silently never fire before
  // then. The message promises six fields, so six it is.
  if (!pattern.trim().startsWith("@") && fields.length !== 6) {
    return `a schedule has 6 fields, seconds first (e.g. "*/10 * * * * *"); this one has ${fields.length}`;
  }
  let cron: Cron | undefined;
  try {
    cron = new Cron(pattern, { paused: true });
    if (cron.nextRun() === null) return "this schedule never fires";
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `not a schedule: ${message.replace(/^CronPattern:\s*/, "")}`;
  } finally {
    cron?.stop();
  }
}
