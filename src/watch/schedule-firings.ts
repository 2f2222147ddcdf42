import { checkedSchedule, type Schedule } from "../config/schedule.js";

const DAY_SECONDS = 86_400;
const DAY_MS = DAY_SECONDS * 1000;

/** Midnight UTC of the day holding `ms`. */
export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Monday 2026-01-05: the default day whose schedules are costed, fixed so that a plan never changes with the date. */
const REFERENCE_DAY_MS = Date.UTC(2026, 0, 5);

/** Midnight UTC of the day a plan costs its schedules on: the given one (PlanInput.dayMs), else the reference Monday. */
export const planningDayStart = (dayMs: number | undefined): number => utcDayStart(dayMs ?? REFERENCE_DAY_MS);

/**
 * The seconds of a UTC day (0..86399, ascending) at which a schedule fires, the way the
 * engine runs it (croner, UTC). Asking croner for every run is ~50 µs a run, seconds for an
 * every-second schedule; instead the parsed pattern's second/minute/hour tables give the
 * times, and one `match` call tells whether the day's date fields (day of month, month,
 * weekday, L, W, #) select this day at all: they are the same for every time of one day.
 * A pattern given as text (the planner's sources carry their schedule as written) is
 * compiled here; it was checked at load.
 */
export function firingsOfDay(schedule: string | Schedule, dayStartMs: number): number[] {
  const { tables, matches } = typeof schedule === "string" ? checkedSchedule(schedule) : schedule;
  const times: number[] = [];
  for (let h = 0; h < 24; h++) {
    if (!tables.hour[h]) continue;
    for (let m = 0; m < 60; m++) {
      if (!tables.minute[m]) continue;
      for (let s = 0; s < 60; s++) if (tables.second[s]) times.push(h * 3600 + m * 60 + s);
    }
  }
  const first = times[0];
  if (first === undefined) return [];
  return matches(new Date(utcDayStart(dayStartMs) + first * 1000)) ? times : [];
}

/**
 * The last firing before the day that starts at `dayStartMs`, in seconds relative to that
 * midnight (negative), looking back up to a year; undefined when there is none.
 */
export function previousFiring(pattern: string | Schedule, dayStartMs: number): number | undefined {
  const start = utcDayStart(dayStartMs);
  const schedule = typeof pattern === "string" ? checkedSchedule(pattern) : pattern;
  for (let back = 1; back <= 366; back++) {
    const firings = firingsOfDay(schedule, start - back * DAY_MS);
    const last = firings[firings.length - 1];
    if (last !== undefined) return last - back * DAY_SECONDS;
  }
  return undefined;
}

/**
 * The longest wait between two firings, in seconds, over the eight days from `fromMs`
 * (a week, so weekday patterns count; plus one to cross the week's end). Infinity when
 * the schedule fires at most once in that time.
 */
export function longestIntervalSeconds(pattern: string | Schedule, fromMs: number): number {
  const start = utcDayStart(fromMs);
  const schedule = typeof pattern === "string" ? checkedSchedule(pattern) : pattern;
  let previous: number | undefined;
  let longest = 0;
  for (let day = 0; day < 8; day++) {
    for (const second of firingsOfDay(schedule, start + day * DAY_MS)) {
      const at = day * DAY_SECONDS + second;
      if (previous !== undefined) longest = Math.max(longest, at - previous);
      previous = at;
    }
  }
  return longest === 0 ? Infinity : longest;
}
