import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { eventTopic } from "../../src/chain/signatures.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { recordKeyOf, repeated, tempDir } from "../helpers/harness.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { daemonFiles, simulatorHead } from "../helpers/simulator-config.js";

let sim: Simulator;
const dir = tempDir("kaiawatch-reload-plan-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 33, initialBlocks: 20, blockTime: 100, density: { eventLogs: 6, nftTransfers: 1, internalTransactions: 1 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

const EVENTS = ["Transfer(address,address,uint256)", "Approval(address,address,uint256)"];

describe("SIGHUP that changes the plan", () => {
  it("hands the position of each event's own source over to one shared source: nothing lost, nothing repeated", async () => {
    const { storePath, alertsPath, configPath } = daemonFiles(dir.path);
    const start = sim.head();
    const configWith = (via: string) => `
${simulatorHead(sim, { storePath, requestsPerSecond: 200 })}
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s }
sinks: { out: { type: file, path: "${alertsPath}" } }
watches: [ { name: token, contract: "${sim.addresses.busyToken}", events: ${JSON.stringify(EVENTS)}, via: ${via} } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
`;
    writeFileSync(configPath, configWith("own"));
    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    const cursors = () => (existsSync(storePath) ? Object.values(readOnDisk(storePath).cursors) : []);
    const shared = () => cursors().find((c) => c.description === `event logs of ${sim.addresses.busyToken.toLowerCase()}`);
    try {
      await waitFor(() => cursors().filter((c) => c.block > start + 8).length === 2, 20_000, "both event sources to advance");
      writeFileSync(configPath, configWith("shared"));
      child.process.kill("SIGHUP");
      await waitFor(() => child.stderr().includes("config reloaded"), 20_000, "the reload");
      // Past where both event sources stopped (on a busy machine they may have run far ahead
      // before the reload): every block up to `end` then was seen by one source or the other.
      const ownEnd = Math.max(...cursors().filter((c) => c.key !== shared()?.key).map((c) => c.block));
      await waitFor(() => (shared()?.block ?? -1) > Math.max(ownEnd, start + 20), 20_000, "the shared source to pass the event sources");
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);

    // The shared source started where the event sources had stopped, not at `start`.
    const starts = child.stderr().split("\n").filter((line) => line.includes('"source starts"')).map((line) => JSON.parse(line) as { source: string; block_range: [number, number] });
    const sharedStart = starts.find((s) => s.source === shared()?.key);
    expect(sharedStart).toBeDefined();
    expect(sharedStart!.block_range[0]).toBeGreaterThan(start + 8);

    // `start: N` starts at block N itself.
    const end = shared()!.block;
    const keys = readOnDisk(storePath).outbox.filter((e) => e.rule === "token-logs").map((e) => recordKeyOf(e.alert));
    const truth = EVENTS.flatMap((event) => sim.truth.accountEventLogs(sim.addresses.busyToken, { from: start, to: end, signature: eventTopic(event) })).map((r) => NORMALIZERS.event_logs(r).key);
    expect(truth.length).toBeGreaterThan(0);
    expect(repeated(keys)).toEqual([]);
    expect(new Set(keys)).toEqual(new Set(truth));
  }, 90_000);
});
