import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { readJsonLines, recordKeyOf, repeated, tempDir } from "../helpers/harness.js";
import { startKaiawatch, waitFor } from "../helpers/child.js";
import { daemonFiles, simulatorHead } from "../helpers/simulator-config.js";

let sim: Simulator;
const dir = tempDir("kaiawatch-reload-");
beforeAll(async () => {
  sim = await createSimulator({ seed: 31, initialBlocks: 20, blockTime: 100, density: { eventLogs: 6, nftTransfers: 3, internalTransactions: 2 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

describe("SIGHUP", () => {
  it("reloads a valid config keeping unchanged cursors, and refuses an invalid one while the old keeps running", async () => {
    const { storePath, alertsPath, configPath } = daemonFiles(dir.path);
    const start = sim.head();
    const base = `
${simulatorHead(sim, { storePath, requestsPerSecond: 200 })}
defaults: { schedule: "* * * * * *", start: ${start}, jitter: 0s }
sinks: { out: { type: file, path: "${alertsPath}" } }
`;
    const tokenOnly = `${base}
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
rules: [ { name: token-logs, watch: token, notify: [out] } ]
`;
    writeFileSync(configPath, tokenOnly);
    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    // The store file is replaced atomically, so reading it while the daemon runs is safe.
    const cursors = () => (existsSync(storePath) ? Object.values(readOnDisk(storePath).cursors) : []);
    const tokenCursor = () => cursors().find((c) => c.watch === "token")?.block ?? -1;
    try {
      await waitFor(() => tokenCursor() > start + 10, 20_000, "the token source to advance");

      writeFileSync(
        configPath,
        `${base}
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: collection-transfers, watch: collection, notify: [out] }
`,
      );
      child.process.kill("SIGHUP");
      await waitFor(() => child.stderr().includes("config reloaded"), 20_000, "the reload");
      await waitFor(() => cursors().some((c) => c.watch === "collection"), 20_000, "the new source's cursor");

      writeFileSync(configPath, `${tokenOnly}\nchain_typo: true\n`);
      child.process.kill("SIGHUP");
      await waitFor(() => child.stderr().includes("reload refused"), 20_000, "the refusal");
      expect(child.stderr()).toContain("chain_typo");
      const refusedAt = tokenCursor();
      await waitFor(() => tokenCursor() > refusedAt + 3, 20_000, "the old config to keep running");
      expect(cursors().some((c) => c.watch === "collection")).toBe(true);
    } finally {
      child.process.kill("SIGTERM");
    }
    expect((await child.exited).code).toBe(0);
    // A source whose definition did not change was not started again from its \`start\`.
    const starts = child.stderr().split("\n").filter((line) => line.includes('"source starts"')).map((line) => (JSON.parse(line) as { watch: string }).watch);
    expect(starts.sort()).toEqual(["collection", "token"]);

    // The token source ran through both reloads without a gap or a repeat.
    const end = tokenCursor();
    // What the scan produced: the outbox holds every alert, delivered or still waiting.
    const outbox = readOnDisk(storePath).outbox;
    const keys = outbox.filter((e) => e.rule === "token-logs").map((e) => recordKeyOf(e.alert));
    expect(readJsonLines(alertsPath).length).toBeGreaterThan(0);
    const truth = sim.truth.accountEventLogs(sim.addresses.busyToken, { from: start, to: end }).map((r) => NORMALIZERS.event_logs(r).key);
    expect(truth.length).toBeGreaterThan(0);
    expect(repeated(keys)).toEqual([]);
    expect(new Set(keys)).toEqual(new Set(truth));
  }, 90_000);
});
