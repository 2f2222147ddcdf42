import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { leaseResource } from "../../src/store/resources.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/child.js";
import { fourSourcesConfig } from "../helpers/four-sources-config.js";
import { freePort } from "../helpers/free-port.js";
import { configFromText, quietCommon, tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";
import { usePostgres } from "../store/postgres/pg-fixtures.js";
import { writeFileSync } from "node:fs";

/**
 * `kaiawatch status` (issue 30), like amtool against Alertmanager: what running daemons say
 * of themselves through /status, with exit 0 when every one asked is ready and 1 when not.
 */
const pg = usePostgres();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function simulator(): Promise<Simulator> {
  const sim = await createSimulator({ seed: 46, initialBlocks: 30 });
  cleanups.push(() => sim.close());
  return sim;
}

interface StatusJson {
  ready: boolean;
  daemons: Array<{ url: string; ready: boolean; error?: string; status?: { replica?: string; sources: Array<{ key: string; holder: string | null; held_here: boolean; last_tick_at: string | null }>; sinks: Record<string, { holder: string | null }> } }>;
}

describe("kaiawatch status", () => {
  it("against one daemon: ready (exit 0) with its sources, sinks, conditions and credits; unreachable is exit 1", async () => {
    const sim = await simulator();
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const port = await freePort();
    const configPath = join(dir.path, "config.yaml");
    const text = fourSourcesConfig(sim, { store: `{ path: ${join(dir.path, "kaiawatch.db")} }`, defaults: `schedule: "* * * * * *", start: latest`, explorer: "daily_credit_budget: 50000" }).replace("status: { listen: false }", `status: { listen: "127.0.0.1:${port}" }`);
    writeFileSync(configPath, text);
    const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
    cleanups.push(() => daemon.stop());
    await daemon.start();
    await waitFor(async () => (await runCli("status", "--config", configPath)).code === 0, 15_000, "the daemon to be ready");

    const status = await runCli("status", "--config", configPath);
    expect(status.err).toBe("");
    const lines = status.out.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}: ready · up \\S+ · head \\d+$`));
    expect(status.out).toMatch(/^ {2}SOURCE\s+WATCH\s+STATE\s+LAG\s+HOLDER\s+LAST TICK$/m);
    for (const source of daemon.plan.sources) expect(status.out).toMatch(new RegExp(`^  ${source.key}  ${source.watch}\\s+ok(, running)?\\s+\\d+\\s+-\\s+\\S+ ago$`, "m"));
    expect(status.out).toMatch(/^ {2}out\s+webhook\s+0\s+0\s+0\s+-\s+-$/m);
    expect(status.out).toContain("Conditions: none firing");
    expect(status.out).toMatch(/^Credits \d{4}-\d{2}-\d{2}: \d+ spent of 50000, \d+ left$/m);

    const json = await runCli("status", "--config", configPath, "--json");
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.out) as StatusJson;
    expect(parsed.ready).toBe(true);
    expect(parsed.daemons[0]!.status!.sources).toHaveLength(daemon.plan.sources.length);

    // A daemon that does not answer is not ready.
    const gone = await freePort();
    const unreachable = await runCli("status", "--url", `http://127.0.0.1:${gone}`);
    expect(unreachable.code).toBe(1);
    expect(unreachable.out).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${gone}: UNREACHABLE: cannot reach`));
  }, 60_000);

  it("against two replicas: each source and sink with the replica holding it; exit 1 once one is gone", async () => {
    const sim = await simulator();
    const url = await pg.database();
    const ports = [await freePort(), await freePort()];
    const replicas: Daemon[] = [];
    for (const [i, id] of ["r1", "r2"].entries()) {
      const text = fourSourcesConfig(sim, { store: `{ url: "${url}", replica_id: ${id}, lease: 10s }`, defaults: `schedule: "* * * * * *", start: latest` }).replace("status: { listen: false }", `status: { listen: "127.0.0.1:${ports[i]}" }`);
      const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
      cleanups.push(() => daemon.stop());
      await daemon.start();
      replicas.push(daemon);
    }
    const [r1, r2] = replicas as [Daemon, Daemon];
    const resources = [...r1.plan.sources.map((s) => leaseResource({ source: s.key })), leaseResource({ sink: "out" })];
    await waitFor(
      async () => {
        await r1.ownership.renewNow();
        await r2.ownership.renewNow();
        return resources.every((resource) => [r1, r2].filter((r) => r.ownership.holds(resource) !== undefined).length === 1) && [r1, r2].every((r) => resources.some((resource) => r.ownership.holds(resource) !== undefined));
      },
      20_000,
      "the leases split between the replicas",
    );
    const urls = ports.flatMap((port) => ["--url", `http://127.0.0.1:${port}`]);
    await waitFor(async () => (await runCli("status", ...urls)).code === 0, 20_000, "both replicas ready");

    const text = await runCli("status", ...urls);
    expect(text.out).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports[0]}: ready · up \\S+ · head \\d+ · replica r1 \\(2 live\\)$`, "m"));
    expect(text.out).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports[1]}: ready · up \\S+ · head \\d+ · replica r2 \\(2 live\\)$`, "m"));
    // Each replica names the holder of every source: itself ("here") or the other.
    expect(text.out).toMatch(/ r1 \(here\) /);
    expect(text.out).toMatch(/ r2 \(here\) /);
    const json = JSON.parse((await runCli("status", ...urls, "--json")).out) as StatusJson;
    for (const [i, daemon] of [r1, r2].entries()) {
      const status = json.daemons[i]!.status!;
      for (const source of status.sources) {
        const holder = [r1, r2].find((r) => r.ownership.holds(leaseResource({ source: source.key })) !== undefined) === r1 ? "r1" : "r2";
        expect(source.holder).toBe(holder);
        expect(source.held_here).toBe(holder === status.replica);
      }
      expect(status.sinks.out!.holder).toBe(daemon.ownership.holds(leaseResource({ sink: "out" })) !== undefined ? status.replica : i === 0 ? "r2" : "r1");
    }

    await r2.stop();
    const one = await runCli("status", ...urls);
    expect(one.code).toBe(1);
    expect(one.out).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${ports[1]}: UNREACHABLE`, "m"));
  }, 90_000);
});
