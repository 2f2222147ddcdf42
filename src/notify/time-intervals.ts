/*
 * Alertmanager's time intervals (its timeinterval package's rules, written anew): a named list
 * of intervals, each a conjunction of optional `times`, `weekdays`, `days_of_month`, `months`,
 * `years`, read in `location` (an IANA zone; UTC when absent). Routes name them in
 * `mute_time_intervals` and `active_time_intervals`. Messages are Alertmanager's.
 */

/** An interval as the config writes it. */
export interface TimeIntervalSpec {
  times?: ReadonlyArray<{ start_time: string; end_time: string }>;
  weekdays?: readonly string[];
  days_of_month?: ReadonlyArray<string | number>;
  months?: ReadonlyArray<string | number>;
  years?: ReadonlyArray<string | number>;
  location?: string;
}

/** `time_intervals:` as the config writes one. */
export interface NamedTimeIntervalSpec {
  name: string;
  time_intervals: readonly TimeIntervalSpec[];
}

/** An inclusive range of numbers (weekday 0 = Sunday; month 1 = January; a negative day counts from the month's end, -1 its last). */
export interface InclusiveRange {
  begin: number;
  end: number;
}

export interface TimeInterval {
  /** Minutes of the day, start inclusive, end exclusive. */
  times?: ReadonlyArray<{ startMinute: number; endMinute: number }>;
  weekdays?: readonly InclusiveRange[];
  daysOfMonth?: readonly InclusiveRange[];
  months?: readonly InclusiveRange[];
  years?: readonly InclusiveRange[];
  /** An IANA zone; UTC when absent. */
  location?: string;
}

/** A named set of intervals: in it when any of them holds. */
export interface NamedTimeInterval {
  name: string;
  intervals: readonly TimeInterval[];
}

/** A time interval's field that does not read; the message is Alertmanager's. */
export class TimeIntervalError extends Error {
  override name = "TimeIntervalError";
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const VALID_TIME = /^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/;

/** "HH:MM" as minutes of the day; 24:00 is the end of the day. */
export function parseTimeOfDay(text: string): number {
  if (!VALID_TIME.test(text)) throw new TimeIntervalError(`couldn't parse timestamp ${text}, invalid format`);
  const [hours, minutes] = text.split(":").map(Number) as [number, number];
  return hours * 60 + minutes;
}

export function parseTimeRange(range: { start_time?: string; end_time?: string }): { startMinute: number; endMinute: number } {
  if (!range.start_time || !range.end_time) throw new TimeIntervalError("both start and end times must be provided");
  const startMinute = parseTimeOfDay(range.start_time);
  const endMinute = parseTimeOfDay(range.end_time);
  if (startMinute >= endMinute) throw new TimeIntervalError("start time cannot be equal or greater than end time");
  return { startMinute, endMinute };
}

/** `a` or `a:b`, lowercased, each side read by `member`. */
function readRange(value: string | number, member: (text: string) => number): InclusiveRange {
  const text = String(value).toLowerCase();
  if (!text.includes(":")) {
    const only = member(text);
    return { begin: only, end: only };
  }
  const parts = text.split(":");
  if (parts.length !== 2) throw new TimeIntervalError(`couldn't parse range ${text}, invalid format`);
  return { begin: member(parts[0] as string), end: member(parts[1] as string) };
}

/** Go's strconv.Atoi, as Alertmanager reads a number. */
function integer(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new TimeIntervalError(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Number(text);
}

export function parseWeekdayRange(value: string | number): InclusiveRange {
  const range = readRange(value, (text) => {
    const day = WEEKDAYS.indexOf(text);
    if (day < 0) throw new TimeIntervalError(`${text} is not a valid weekday`);
    return day;
  });
  if (range.begin > range.end) throw new TimeIntervalError("start day cannot be before end day");
  return range;
}

export function parseDayOfMonthRange(value: string | number): InclusiveRange {
  const range = readRange(value, integer);
  for (const day of [range.begin, range.end]) if (day === 0 || day < -31 || day > 31) throw new TimeIntervalError(`${day} is not a valid day of the month: out of range`);
  if (range.begin < 0 && range.end > 0) throw new TimeIntervalError("end day must be negative if start day is negative");
  // Months of other lengths cannot be checked here (they are clamped when read); 28 catches the blatant.
  const begin = range.begin < 0 ? 28 + range.begin : range.begin;
  const end = range.end < 0 ? 28 + range.end : range.end;
  if (begin > end) throw new TimeIntervalError(`end day ${range.end} is always before start day ${range.begin}`);
  return range;
}

export function parseMonthRange(value: string | number): InclusiveRange {
  const range = readRange(value, (text) => {
    const month = MONTHS.indexOf(text);
    if (month >= 0) return month + 1;
    if (!/^[+-]?\d+$/.test(text)) throw new TimeIntervalError(`${text} is not a valid month`);
    return Number(text);
  });
  if (range.begin > range.end) throw new TimeIntervalError(`end month ${MONTHS[range.end - 1] ?? range.end} is before start month ${MONTHS[range.begin - 1] ?? range.begin}`);
  return range;
}

export function parseYearRange(value: string | number): InclusiveRange {
  const range = readRange(value, integer);
  if (range.begin > range.end) throw new TimeIntervalError(`end year ${range.end} is before start year ${range.begin}`);
  return range;
}

/** An IANA zone name Node's Intl knows (Go's time.LoadLocation reads the same database). */
export function parseLocation(name: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw new TimeIntervalError(`unknown time zone ${name}`);
  }
}

export function parseTimeInterval(spec: TimeIntervalSpec): TimeInterval {
  return {
    ...(spec.times === undefined ? {} : { times: spec.times.map(parseTimeRange) }),
    ...(spec.weekdays === undefined ? {} : { weekdays: spec.weekdays.map(parseWeekdayRange) }),
    ...(spec.days_of_month === undefined ? {} : { daysOfMonth: spec.days_of_month.map(parseDayOfMonthRange) }),
    ...(spec.months === undefined ? {} : { months: spec.months.map(parseMonthRange) }),
    ...(spec.years === undefined ? {} : { years: spec.years.map(parseYearRange) }),
    ...(spec.location === undefined ? {} : { location: parseLocation(spec.location) }),
  };
}

export function parseNamedTimeIntervals(specs: readonly NamedTimeIntervalSpec[]): Map<string, NamedTimeInterval> {
  return new Map(specs.map((spec) => [spec.name, { name: spec.name, intervals: spec.time_intervals.map(parseTimeInterval) }]));
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  weekday: number;
  minuteOfDay: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of `zone` at `ms`, from the zone database (so a DST change moves it as it moves the zone's clocks). */
function localTime(ms: number, zone: string): LocalTime {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", weekday: "long" });
    formats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((part) => [part.type, part.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS.indexOf(String(parts.weekday).toLowerCase()),
    minuteOfDay: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const within = (ranges: readonly InclusiveRange[] | undefined, value: number) => ranges === undefined || ranges.some((r) => value >= r.begin && value <= r.end);

/** Whether `ms` falls in the interval: every field it sets holds, read on its zone's wall clock. */
export function containsTime(interval: TimeInterval, ms: number): boolean {
  const t = localTime(ms, interval.location ?? "UTC");
  if (interval.times !== undefined && !interval.times.some((r) => t.minuteOfDay >= r.startMinute && t.minuteOfDay < r.endMinute)) return false;
  if (interval.daysOfMonth !== undefined) {
    const length = daysInMonth(t.year, t.month);
    const inDays = interval.daysOfMonth.some((r) => {
      const begin = r.begin < 0 ? length + r.begin + 1 : r.begin;
      const end = r.end < 0 ? length + r.end + 1 : r.end;
      // A range starting after this month's end holds no day of it; one ending after it is cut to it.
      if (begin > length) return false;
      return t.day >= Math.max(begin, -length) && t.day <= Math.min(end, length);
    });
    if (!inDays) return false;
  }
  return within(interval.months, t.month) && within(interval.weekdays, t.weekday) && within(interval.years, t.year);
}

/** The names of the intervals among `named` that hold at `ms`, in order. */
export function intervalsAt(named: readonly NamedTimeInterval[], ms: number): string[] {
  return named.filter((n) => n.intervals.some((interval) => containsTime(interval, ms))).map((n) => n.name);
}
