import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { pagerDutyProblems, startPagerDutyReceiver } from "../notify/pagerduty-receiver.js";
import { startTeamsReceiver, teamsProblems } from "../notify/teams-receiver.js";

/** `kaiawatch test-sink` with the incident sinks, against local receivers that check the payloads. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ROUTING_KEY = "0123456789abcdefROUTINGKEYsecret";

function writeConfig(sinks: string): string {
  const dir = tempDir("kaiawatch-test-sink-");
  cleanups.push(dir.remove);
  const path = join(dir.path, "config.yaml");
  writeFileSync(path, `\nstore: { path: "${join(dir.path, "store.json")}" }\nwatches: [ { name: token, contract: "0x1111111111111111111111111111111111111111" } ]\nsinks:\n${sinks}\n`);
  return path;
}

async function testSink(args: string[], env: NodeJS.ProcessEnv = {}) {
  const io = memoryIO(env);
  const code = await main(["test-sink", ...args], io);
  return { code, out: io.out(), all: `${io.out()}${io.err()}` };
}

describe("kaiawatch test-sink with PagerDuty and Teams", () => {
  it("triggers a PagerDuty test event that the Events API accepts, and never prints the routing key", async () => {
    const receiver = await startPagerDutyReceiver();
    cleanups.push(() => receiver.close());
    const config = writeConfig(`  oncall: { type: pagerduty, routing_key: "\${PD_KEY}", url: "${receiver.url}/v2/enqueue", severity: info }`);
    const result = await testSink(["oncall", "--config", config], { PD_KEY: ROUTING_KEY });
    expect(result.code, result.all).toBe(0);
    expect(result.out).toMatch(/^sink oncall \(pagerduty\): accepted the test alert in \d+ ms/);
    expect(receiver.requests.map(pagerDutyProblems)).toEqual([[]]);
    expect(receiver.events()[0]).toMatchObject({ event_action: "trigger", payload: { severity: "info", class: "kaiawatch-test" } });
    expect(result.all).not.toContain(ROUTING_KEY);
  });

  it("posts a Teams test card that the Workflows receiver accepts, and reports a refusal as permanent without the URL", async () => {
    const receiver = await startTeamsReceiver();
    cleanups.push(() => receiver.close());
    const url = `${receiver.url}/workflows/abc/triggers/manual/paths/invoke?sig=T3amsS1gnature`;
    const config = writeConfig('  room: { type: teams, url: "${TEAMS_URL}" }');
    const result = await testSink(["room", "--config", config], { TEAMS_URL: url });
    expect(result.code, result.all).toBe(0);
    expect(receiver.requests.map(teamsProblems)).toEqual([[]]);

    receiver.reply = (res) => {
      res.statusCode = 400;
      res.end(`bad request to ${url}`);
    };
    const refused = await testSink(["room", "--config", config], { TEAMS_URL: url });
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("sink room (teams): permanent error: KW_NOTIFY_HTTP");
    expect(refused.all).not.toContain("T3amsS1gnature");
  });
});
