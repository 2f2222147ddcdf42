import { afterAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { configErrorOf, issueAt } from "../config/helpers.js";
import { memoryIO, tempDir } from "../helpers/harness.js";

const dir = tempDir("kaiawatch-routes-time-");
afterAll(() => dir.remove());

const CONFIG = `
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
watches:
  - { name: treasury, account: "0x1111111111111111111111111111111111111111" }
rules:
  - { name: low, watch: treasury, labels: { severity: warning } }
sinks:
  ops: { type: console }
  chat: { type: console }
  pager: { type: console }
time_intervals:
  - name: offhours
    time_intervals:
      - times: [{ start_time: "00:00", end_time: "09:00" }, { start_time: "17:00", end_time: "24:00" }]
        location: Europe/Berlin
      - weekdays: [saturday, sunday]
        location: Europe/Berlin
  - name: business-hours
    time_intervals:
      - { weekdays: ["monday:friday"], times: [{ start_time: "09:00", end_time: "17:00" }], location: Europe/Berlin }
routes:
  receiver: ops
  routes:
    - matchers: ['{severity="warning"}']
      receiver: chat
      mute_time_intervals: [offhours]
    - matchers: ['severity=~"warning|critical"']
      receiver: pager
      active_time_intervals: [business-hours]
`;
const configPath = join(dir.path, "config.yaml");
writeFileSync(configPath, CONFIG);

async function routes(...args: string[]) {
  const io = memoryIO();
  const code = await main(["routes", "--config", configPath, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe("kaiawatch routes --test --time", () => {
  it("says whether the route is muted then and by which interval, in the interval's zone with its DST", async () => {
    // 08:30 in Berlin on the Monday after the spring-forward night: 06:30 UTC (CEST, UTC+2).
    const early = await routes("--test", "severity=warning", "--time", "2026-03-30T06:30:00Z");
    expect(early.code).toBe(0);
    expect(early.out).toBe(
      [
        "chat",
        '  labels {severity="warning"}',
        '  routes.routes[0]  {severity="warning"} → chat  group_by: (one group)  wait 30s, interval 5m, repeat 4h  mute: offhours',
        "    group {}",
        '    MUTED at 2026-03-30T06:30:00.000Z (in mute time interval "offhours"): recorded, not sent',
        "",
      ].join("\n"),
    );
    // 09:30 CEST is business hours; in winter (CET, UTC+1) 07:30 UTC would still be 08:30.
    expect((await routes("--test", "severity=warning", "--time", "2026-03-30T07:30:00Z")).out).toContain("    not muted at 2026-03-30T07:30:00.000Z");
    expect((await routes("--test", "severity=warning", "--time", "2026-03-27T07:30:00Z")).out).toContain('MUTED at 2026-03-27T07:30:00.000Z (in mute time interval "offhours")');
    const pager = await routes("--test", "severity=critical", "--time", "2026-03-28T12:00:00+01:00");
    expect(pager.out).toContain("MUTED at 2026-03-28T11:00:00.000Z (outside its active time intervals (business-hours)): recorded, not sent");
  });

  it("--time must be a time, and is for --test", async () => {
    expect((await routes("--test", "severity=warning", "--time", "tomorrow")).code).toBe(2);
    expect((await routes("--time", "2026-03-30T06:30:00Z")).code).toBe(2);
  });
});

describe("time_intervals in the config: every mistake with its key path and line", () => {
  const parse = (text: string) => parseConfigText(text, { fileName: "test.yaml", env: {}, checks: CONFIG_CHECKS });

  it("reports each at its place, with Alertmanager's message", () => {
    const text = `
watches:
  - { name: w, account: "0x1111111111111111111111111111111111111111" }
rules:
  - { name: r1, watch: w }
sinks:
  out: { type: console }
time_intervals:
  - name: nights
    time_intervals:
      - weekdays: ["friday:monday"]
        days_of_month: ["-15:5"]
        location: Mars/Olympus
  - name: nights
    time_intervals: []
routes:
  receiver: out
  mute_time_intervals: [nights]
  routes:
    - matchers: [team=x]
      mute_time_intervals: [nigths]
`;
    const at = issueAt(text, configErrorOf(() => parse(text)));
    at('"friday:monday"', "time_intervals[0].time_intervals[0].weekdays[0]", "start day cannot be before end day");
    at('"-15:5"', "time_intervals[0].time_intervals[0].days_of_month[0]", "end day must be negative if start day is negative");
    at("Mars/Olympus", "time_intervals[0].time_intervals[0].location", "unknown time zone Mars/Olympus");
    at("nights\n    time_intervals: []", "time_intervals[1].name", 'time interval "nights" is not unique');
    at("mute_time_intervals: [nights]", "routes.mute_time_intervals", "the root route must not have any mute time intervals");
    at("nigths]", "routes.routes[0].mute_time_intervals[0]", 'undefined time interval "nigths" used in route (did you mean "nights"?)');
  });
});
