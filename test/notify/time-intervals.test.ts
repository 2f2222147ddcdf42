import { describe, expect, it } from "vitest";
import { buildRouteTree, matchRoutes, routeMuteAt } from "../../src/notify/routes.js";
import { containsTime, parseNamedTimeIntervals, parseTimeInterval, type TimeInterval, type TimeIntervalSpec } from "../../src/notify/time-intervals.js";

/** Go's time.RFC822Z ("02 Jan 06 15:04 -0700"), the form upstream's cases are written in, as ms. */
function rfc822z(text: string): number {
  const match = /^(\d{1,2}) (\w{3}) (\d{2}) (\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(text);
  if (!match) throw new Error(`not RFC822Z: ${text}`);
  const [, day, mon, yy, hh, mm, sign, oh, om] = match as unknown as string[];
  const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].indexOf(mon as string);
  const offset = (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  return Date.UTC(2000 + Number(yy), month, Number(day), Number(hh), Number(mm)) - offset;
}

// Cases of prometheus/alertmanager timeinterval/timeinterval_test.go (timeIntervalTestCases and
// yamlUnmarshalTestCases), as data: an interval as a config writes it, times in it, times not.
// (Upstream builds the clamping case's interval directly: a config cannot write -31:31.)
const CONTAINS: ReadonlyArray<{ what: string; spec: TimeIntervalSpec | TimeInterval; in: string[]; out: string[] }> = [
  { what: "empty: always", spec: {}, in: ["02 Jan 06 15:04 +0000", "03 Jan 07 10:04 +0000", "04 Jan 06 09:04 +0000"], out: [] },
  {
    what: "9am to 5pm, monday to friday",
    spec: { times: [{ start_time: "09:00", end_time: "17:00" }], weekdays: ["monday:friday"] },
    in: ["04 May 20 15:04 +0000", "05 May 20 10:04 +0000", "09 Jun 20 09:04 +0000"],
    out: ["03 May 20 15:04 +0000", "04 May 20 08:59 +0000", "05 May 20 05:00 +0000"],
  },
  {
    what: "Easter 2020",
    spec: { days_of_month: ["4:6"], months: ["4"], years: ["2020"] },
    in: ["04 Apr 20 15:04 +0000", "05 Apr 20 00:00 +0000", "06 Apr 20 23:05 +0000"],
    out: ["03 May 18 15:04 +0000", "03 Apr 20 23:59 +0000", "04 Jun 20 23:59 +0000", "06 Apr 19 23:59 +0000", "07 Apr 20 00:00 +0000"],
  },
  {
    what: "negative days of month: the last 3 days of each month",
    spec: { days_of_month: ["-3:-1"] },
    in: ["31 Jan 20 15:04 +0000", "30 Jan 20 15:04 +0000", "29 Jan 20 15:04 +0000", "30 Jun 20 00:00 +0000", "29 Feb 20 23:05 +0000"],
    out: ["03 May 18 15:04 +0000", "27 Jan 20 15:04 +0000", "03 Apr 20 23:59 +0000", "04 Jun 20 23:59 +0000", "06 Apr 19 23:59 +0000", "07 Apr 20 00:00 +0000", "01 Mar 20 00:00 +0000"],
  },
  {
    what: "out of bound days are clamped to the month",
    spec: { months: [{ begin: 6, end: 6 }], daysOfMonth: [{ begin: -31, end: 31 }] },
    in: ["30 Jun 20 00:00 +0000", "01 Jun 20 00:00 +0000"],
    out: ["31 May 20 00:00 +0000", "1 Jul 20 00:00 +0000"],
  },
  {
    what: "another zone: Sydney business hours",
    spec: { times: [{ start_time: "09:00", end_time: "17:00" }], weekdays: ["monday:friday"], location: "Australia/Sydney" },
    in: ["06 Apr 21 13:00 +1000"],
    out: ["06 Apr 21 13:00 +0000"],
  },
  {
    what: "another zone during its daylight saving time",
    spec: { times: [{ start_time: "09:00", end_time: "17:00" }], weekdays: ["monday:friday"], months: ["11"], location: "Australia/Sydney" },
    in: ["01 Nov 21 09:00 +1100", "31 Oct 21 22:00 +0000"],
    out: ["31 Oct 21 21:00 +0000"],
  },
  {
    what: "last-day mutes do not shift in spring-forward months",
    spec: { days_of_month: ["-1"], location: "America/New_York" },
    in: ["31 Mar 21 12:00 -0400"],
    out: ["30 Mar 21 12:00 -0400"],
  },
  {
    what: "business hours",
    spec: { weekdays: ["monday:friday"], times: [{ start_time: "09:00", end_time: "17:00" }] },
    in: ["08 Jul 20 09:00 +0000", "08 Jul 20 16:59 +0000", "01 Apr 21 13:00 +0000"],
    out: ["08 Jul 20 05:00 +0000", "08 Jul 20 08:59 +0000"],
  },
  {
    what: "the last week of the first quarter, but Saturday, in business hours, 2020-2025 and 2030-2035",
    spec: { weekdays: ["monday:friday", "sunday"], months: ["january:march"], days_of_month: ["-7:-1"], years: ["2020:2025", "2030:2035"], times: [{ start_time: "09:00", end_time: "17:00" }] },
    in: ["27 Jan 21 09:00 +0000", "28 Jan 21 16:59 +0000", "29 Jan 21 13:00 +0000", "31 Mar 25 13:00 +0000", "31 Jan 35 13:00 +0000"],
    out: ["30 Jan 21 13:00 +0000", "01 Apr 21 13:00 +0000", "30 Jan 26 13:00 +0000", "31 Jan 35 17:01 +0000"],
  },
];

const REFUSED: ReadonlyArray<[TimeIntervalSpec, string]> = [
  [{ times: [{ start_time: "01:99", end_time: "23:59" }] }, "couldn't parse timestamp 01:99, invalid format"],
  [{ times: [{ start_time: "00:00", end_time: "99:99" }] }, "couldn't parse timestamp 99:99, invalid format"],
  [{ times: [{ start_time: "17:31", end_time: "17:31" }] }, "start time cannot be equal or greater than end time"],
  [{ times: [{ start_time: "12:30", end_time: "24:01" }] }, "couldn't parse timestamp 24:01, invalid format"],
  [{ times: [{ start_time: "09:30", end_time: "07:41" }] }, "start time cannot be equal or greater than end time"],
  [{ times: [{ start_time: "14:03" } as { start_time: string; end_time: string }] }, "both start and end times must be provided"],
  [{ weekdays: ["friday:monday"] }, "start day cannot be before end day"],
  [{ weekdays: ["blurgsday:flurgsday"] }, "blurgsday is not a valid weekday"],
  [{ weekdays: ["1:3"] }, "1 is not a valid weekday"],
  [{ weekdays: ["-2:-1"] }, "-2 is not a valid weekday"],
  [{ days_of_month: ["0"] }, "0 is not a valid day of the month: out of range"],
  [{ days_of_month: ["-50:-20"] }, "-50 is not a valid day of the month: out of range"],
  [{ days_of_month: ["1:50"] }, "50 is not a valid day of the month: out of range"],
  [{ days_of_month: ["-15:5"] }, "end day must be negative if start day is negative"],
  [{ days_of_month: ["10:-25"] }, "end day -25 is always before start day 10"],
  [{ months: ["martius:june"] }, "martius is not a valid month"],
  [{ months: ["march:junius"] }, "junius is not a valid month"],
  [{ months: ["december:january"] }, "end month january is before start month december"],
  [{ years: ["2022:2020"] }, "end year 2020 is before start year 2022"],
  [{ location: "Mars/Olympus_Mons" }, "unknown time zone Mars/Olympus_Mons"],
];

describe("time intervals: Alertmanager's cases", () => {
  it.each(CONTAINS)("$what", ({ spec, in: inside, out }) => {
    const interval = "daysOfMonth" in spec ? (spec as TimeInterval) : parseTimeInterval(spec as TimeIntervalSpec);
    for (const text of inside) expect(containsTime(interval, rfc822z(text)), text).toBe(true);
    for (const text of out) expect(containsTime(interval, rfc822z(text)), text).toBe(false);
  });

  it.each(REFUSED)("refuses %j", (spec, message) => {
    expect(() => parseTimeInterval(spec)).toThrow(message);
  });

  it("reads what upstream reads: 1:-1, names in any case, 24:00, a number where a YAML list holds one", () => {
    expect(parseTimeInterval({ days_of_month: ["1:-1"] }).daysOfMonth).toEqual([{ begin: 1, end: -1 }]);
    expect(parseTimeInterval({ months: ["January:december"] }).months).toEqual([{ begin: 1, end: 12 }]);
    expect(parseTimeInterval({ times: [{ start_time: "00:00", end_time: "24:00" }] }).times).toEqual([{ startMinute: 0, endMinute: 1440 }]);
    expect(parseTimeInterval({ days_of_month: [-1], years: [2026] })).toEqual({ daysOfMonth: [{ begin: -1, end: -1 }], years: [{ begin: 2026, end: 2026 }] });
  });
});

describe("time intervals on the wall clock", () => {
  const berlinHours: TimeInterval = parseTimeInterval({ weekdays: ["monday:friday"], times: [{ start_time: "09:00", end_time: "17:00" }], location: "Europe/Berlin" });

  it("business hours in a zone with DST follow its clocks across both changes", () => {
    // Berlin is UTC+1 in winter, UTC+2 from 2026-03-29 (spring forward) to 2026-10-25 (fall back).
    expect(containsTime(berlinHours, Date.parse("2026-03-27T08:00:00Z"))).toBe(true); // Fri 09:00 CET
    expect(containsTime(berlinHours, Date.parse("2026-03-27T07:59:00Z"))).toBe(false);
    expect(containsTime(berlinHours, Date.parse("2026-03-30T07:00:00Z"))).toBe(true); // Mon 09:00 CEST
    expect(containsTime(berlinHours, Date.parse("2026-03-30T06:59:00Z"))).toBe(false);
    expect(containsTime(berlinHours, Date.parse("2026-03-30T14:59:00Z"))).toBe(true); // 16:59 CEST
    expect(containsTime(berlinHours, Date.parse("2026-03-30T15:00:00Z"))).toBe(false);
    expect(containsTime(berlinHours, Date.parse("2026-10-26T08:00:00Z"))).toBe(true); // Mon 09:00 CET again
    expect(containsTime(berlinHours, Date.parse("2026-10-26T07:00:00Z"))).toBe(false);
    // The hour skipped on the spring-forward night does not exist; the Sunday is outside anyway.
    const nightly = parseTimeInterval({ times: [{ start_time: "02:00", end_time: "03:00" }], location: "Europe/Berlin" });
    expect(containsTime(nightly, Date.parse("2026-03-29T00:59:00Z"))).toBe(false); // 01:59 CET, then 03:00 CEST
    expect(containsTime(nightly, Date.parse("2026-03-29T01:00:00Z"))).toBe(false);
    expect(containsTime(nightly, Date.parse("2026-10-25T00:30:00Z"))).toBe(true); // 02:30 CEST
    expect(containsTime(nightly, Date.parse("2026-10-25T01:30:00Z"))).toBe(true); // 02:30 CET: the hour happens twice
  });

  it("days_of_month: [-1] is each month's last day, February's in a leap year too", () => {
    const last = parseTimeInterval({ days_of_month: [-1] });
    expect(containsTime(last, Date.parse("2026-02-28T12:00:00Z"))).toBe(true);
    expect(containsTime(last, Date.parse("2028-02-28T12:00:00Z"))).toBe(false);
    expect(containsTime(last, Date.parse("2028-02-29T12:00:00Z"))).toBe(true);
    expect(containsTime(last, Date.parse("2026-04-30T23:59:00Z"))).toBe(true);
    expect(containsTime(last, Date.parse("2026-05-01T00:00:00Z"))).toBe(false);
    // Read in the interval's zone: 23:30 UTC on April 30th is already May 1st in Tokyo.
    expect(containsTime(parseTimeInterval({ days_of_month: [-1], location: "Asia/Tokyo" }), Date.parse("2026-04-30T23:30:00Z"))).toBe(false);
  });
});

describe("a route's time intervals", () => {
  const intervals = parseNamedTimeIntervals([
    { name: "offhours", time_intervals: [{ times: [{ start_time: "00:00", end_time: "09:00" }] }, { times: [{ start_time: "17:00", end_time: "24:00" }] }, { weekdays: ["saturday", "sunday"] }] },
    { name: "business-hours", time_intervals: [{ weekdays: ["monday:friday"], times: [{ start_time: "09:00", end_time: "17:00" }] }] },
  ]);
  const tree = buildRouteTree(
    {
      receiver: "ops",
      routes: [
        { matchers: ['severity="warning"'], receiver: "chat", mute_time_intervals: ["offhours"] },
        { matchers: ['severity=~"warning|critical"'], receiver: "pager", active_time_intervals: ["business-hours"] },
      ],
    },
    intervals,
  );
  const saturday = Date.parse("2026-03-28T12:00:00Z");
  const monday = Date.parse("2026-03-30T10:00:00Z");

  it("mutes in a mute interval and outside the active ones, naming the interval", () => {
    const [chat, pager] = tree.routes as [typeof tree, typeof tree];
    expect(routeMuteAt(chat, saturday)).toEqual({ interval: "offhours", kind: "mute" });
    expect(routeMuteAt(chat, monday)).toBeUndefined();
    expect(routeMuteAt(pager, saturday)).toEqual({ interval: "business-hours", kind: "active" });
    expect(routeMuteAt(pager, monday)).toBeUndefined();
    expect(routeMuteAt(tree, saturday)).toBeUndefined();
  });

  it("a muted route still ends the alert: it does not fall through to the next sibling", () => {
    const ends = matchRoutes(tree, { severity: "warning" });
    expect(ends.map((r) => r.id)).toEqual(["routes.routes[0]"]);
    expect(routeMuteAt(ends[0] as typeof tree, saturday)?.interval).toBe("offhours");
  });

  it("children do not inherit their parent's intervals, as in Alertmanager", () => {
    const nested = buildRouteTree({ receiver: "ops", routes: [{ receiver: "chat", mute_time_intervals: ["offhours"], routes: [{ matchers: ["team=x"] }] }] }, intervals);
    const child = nested.routes[0]?.routes[0];
    expect(child?.muteTimeIntervals).toEqual([]);
  });
});
