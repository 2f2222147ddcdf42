import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../../src/simulator/index.js";
import { BIN, waitFor } from "../../helpers/child.js";
import { tempDir } from "../../helpers/harness.js";

/**
 * Two daemons on one store that see the same pid and the same host name: two containers
 * sharing a volume and a host name are both PID 1. Each daemon runs as PID 1 of a PID
 * namespace of its own (unshare), on this host, so the lock file of one names exactly the pid
 * the other has. Only a lock the kernel holds for the process tells them apart.
 */
const UNSHARE = ["--pid", "--fork", "--mount-proc"];
/** unshare as root, else in a user namespace of its own; undefined where neither works (no util-linux, no user namespaces). */
const unshareArgs = (() => {
  if (process.platform !== "linux") return undefined;
  for (const args of [UNSHARE, ["--user", "--map-root-user", ...UNSHARE]]) {
    if (spawnSync("unshare", [...args, "true"], { stdio: "ignore" }).status === 0) return args;
  }
  return undefined;
})();

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Daemon {
  unshare: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
  /** The daemon's pid as seen from here (the child of unshare). */
  hostPid: () => number | undefined;
}

function startInNamespace(config: string): Daemon {
  const child = spawn("unshare", [...unshareArgs!, process.execPath, BIN, "run", "--config", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const hostPid = () => {
    try {
      const text = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
      return text === "" ? undefined : Number(text.split(" ")[0]);
    } catch {
      return undefined;
    }
  };
  cleanups.push(() => {
    const pid = hostPid();
    if (pid !== undefined) process.kill(pid, "SIGKILL");
  });
  return { unshare: child, stderr: () => stderr, exited, hostPid };
}

function alertIds(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { id: string }).id);
}

describe.skipIf(unshareArgs === undefined)("two daemons that see the same pid on one store", () => {
  it("refuses the second with KW_STORE_LOCKED while the first goes on delivering, each alert once", { timeout: 60_000 }, async () => {
    const sim: Simulator = await createSimulator({ seed: 29, initialBlocks: 5 });
    const dir = tempDir();
    cleanups.push(async () => {
      await sim.close();
      dir.remove();
    });
    const store = join(dir.path, "store.db");
    const alerts = join(dir.path, "alerts.jsonl");
    const config = join(dir.path, "config.yaml");
    writeFileSync(
      config,
      `
explorer: { base_url: "${sim.url}", requests_per_second: 500 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0, head_interval: 50ms }
store: { path: "${store}" }
status: { listen: false }
defaults: { schedule: head, start: latest }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: logs, watch: token, notify: [file] }
sinks:
  file: { type: file, path: "${alerts}" }
`,
    );
    const first = startInNamespace(config);
    await waitFor(() => existsSync(`${store}.lock`) && first.stderr().includes("source starts"), 20_000, "the first daemon to take the lock and start");
    // PID 1 in its namespace: the pid the second daemon will have too.
    expect(JSON.parse(readFileSync(`${store}.lock`, "utf8"))).toMatchObject({ pid: 1 });
    sim.mine(5);
    await waitFor(() => alertIds(alerts).length > 0, 20_000, "the first daemon's first alerts");

    const second = startInNamespace(config);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toMatch(/KW_STORE_LOCKED: .*in use by another process with this same pid 1\b/);

    // The first goes on: the blocks mined after the refusal are delivered.
    const before = alertIds(alerts).length;
    sim.mine(5);
    await waitFor(() => alertIds(alerts).length > before, 20_000, "alerts of the blocks mined after the refusal");
    expect(first.hostPid()).toBeDefined();
    process.kill(first.hostPid()!, "SIGTERM");
    expect(await first.exited).toBe(0);
    expect(existsSync(`${store}.lock`)).toBe(false);

    const ids = alertIds(alerts);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
