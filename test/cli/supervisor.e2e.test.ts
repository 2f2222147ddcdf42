import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulator } from "../../src/simulator/index.js";
import { processState } from "../../src/store/store-lock.js";
import { BIN, waitFor } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { simulatorHead } from "../helpers/simulator-config.js";

/**
 * The service command of docs/deployment.md ("Supervisors") as a supervisor runs it: started in a process
 * group of its own, stopped with SIGTERM to the process started, and then nothing of it may be
 * left: no process in its group, no store lock.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The command in docs/deployment.md's block marked `<!-- service-command -->`, as argv. */
function serviceCommand(): string[] {
  const page = readFileSync(new URL("../../docs/deployment.md", import.meta.url), "utf8");
  const match = /<!-- service-command -->\s*```sh\n([^\n]+)\n```/.exec(page);
  if (!match) throw new Error("docs/deployment.md has no service command block");
  return match[1]!.trim().split(/\s+/);
}

function groupIsEmpty(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  return false;
}

describe.skipIf(process.platform !== "linux")("the documented service command under a supervisor", () => {
  it("runs node on kaiawatch's bin, so that SIGTERM stops the daemon and leaves no process and no lock", { timeout: 60_000 }, async () => {
    const argv = serviceCommand();
    expect(argv[0]).toBe("node");
    expect(argv[1]).toMatch(/kaiawatch\/dist\/cli\/bin\.js$/);
    const sim = await createSimulator({ seed: 9, initialBlocks: 5 });
    const dir = tempDir();
    cleanups.push(async () => {
      await sim.close();
      dir.remove();
    });
    const store = join(dir.path, "store.json");
    writeFileSync(
      join(dir.path, "config.yaml"),
      `
${simulatorHead(sim, { storePath: store, requestsPerSecond: 500 })}
defaults: { schedule: "* * * * * *", start: latest, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: logs, watch: token, notify: [file] }
sinks:
  file: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }
`,
    );
    // node as on PATH would be found by a supervisor; the bin path as installed here (this checkout's dist/).
    const child = spawn(process.execPath, [BIN, ...argv.slice(2)], { cwd: dir.path, detached: true, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const pid = child.pid!;
    cleanups.push(() => {
      if (!groupIsEmpty(pid)) process.kill(-pid, "SIGKILL");
    });
    await waitFor(() => existsSync(`${store}.lock`) && stderr.includes("source starts"), 20_000, "the daemon to take the lock and start its source");
    expect(JSON.parse(readFileSync(`${store}.lock`, "utf8"))).toMatchObject({ pid });

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(existsSync(`${store}.lock`)).toBe(false);
    // Nothing of the service is left: the process is reaped and its group is empty.
    expect(processState(pid)).toBeUndefined();
    await waitFor(() => groupIsEmpty(pid), 5_000, "the service's process group to be empty");
  });
});
