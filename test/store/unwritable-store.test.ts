import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { openStore } from "../../src/store/open-store.js";
import { BIN } from "../helpers/child.js";
import { runCli } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/harness.js";

/**
 * A store the daemon's user cannot write is refused at start with its cause (the folder, the
 * permission missing, the user) and a code of its own, never as a store lock; `doctor` fails
 * its store check in the same words. Root writes through any permission: as root the daemon
 * runs as uid 1000 (the Docker image's user) on a folder root owns; as anyone else on a
 * folder without write permission. A path under a regular file stops root too.
 */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const AS_ROOT = process.getuid?.() === 0;
const DAEMON_UID = AS_ROOT ? 1000 : process.getuid!();

function workDir(): string {
  const dir = tempDir("kaiawatch-unwritable-");
  // uid 1000 must reach the config and the folder (mkdtemp makes them 0700).
  chmodSync(dir.path, 0o755);
  cleanups.push(() => {
    chmodSync(dir.path, 0o755);
    dir.remove();
  });
  return dir.path;
}

function configAt(dir: string, storePath: string): string {
  const path = join(dir, "config.yaml");
  writeFileSync(
    path,
    `
explorer: { base_url: "http://127.0.0.1:1", api_key: "k", api_plan: FREE }
chain: { network: kairos, rpc_url: "http://127.0.0.1:1" }
store: { path: "${storePath}" }
sinks: { out: { type: console } }
watches: [{ name: w, account: "0x1111111111111111111111111111111111111111", sources: [nft_transfers] }]
rules: [{ name: r, watch: w, notify: [out] }]
`,
    { mode: 0o644 },
  );
  return path;
}

/** `kaiawatch ARGS…` as the daemon's user (uid 1000 when the test runs as root); its exit code and output. */
async function kaiawatchAsDaemonUser(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], ...(AS_ROOT ? { uid: 1000, gid: 1000 } : {}) });
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", (exitCode) => resolve(exitCode)));
  return { code, out, err };
}

const storeLine = (out: string) => out.split("\n").find((line) => /^\s+(ok|warn|FAIL)\s+store\s/.test(line)) ?? "";

describe("a store the daemon cannot write", () => {
  it("a folder without write permission for the daemon's user: the folder, the permission and the user, at start and in doctor", async () => {
    const dir = workDir();
    const data = join(dir, "data");
    mkdirSync(data);
    // As root: root owns it (0755) and the daemon runs as uid 1000. Otherwise: no write bit.
    if (!AS_ROOT) chmodSync(data, 0o555);
    const config = configAt(dir, join(data, "kaiawatch.db"));

    const run = await kaiawatchAsDaemonUser(["run", "--config", config]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`KW_STORE_NOT_WRITABLE: cannot write in the store folder ${data}: `);
    expect(run.err).toMatch(new RegExp(`(user \\S+ \\()?uid ${DAEMON_UID}\\)? has no write permission on ${data} \\(owner uid \\d+, mode \\d+\\)`));
    expect(run.err).toContain("chown 1000:1000 the folder mounted at /data");
    expect(run.err).not.toContain("KW_STORE_LOCKED");
    expect(run.err).not.toContain("SQLITE_CANTOPEN");

    const doctor = await kaiawatchAsDaemonUser(["doctor", "--config", config]);
    expect(doctor.code).toBe(1);
    const line = storeLine(doctor.out);
    expect(line).toMatch(/^\s+FAIL\s+store\s+KW_STORE_NOT_WRITABLE: /);
    // The same words as the daemon's refusal.
    expect(line).toContain(run.err.trim().replace(/^kaiawatch: /, ""));
  });

  it("a folder that cannot be made (a regular file on its path): refused as such, for root too, at start and in doctor", async () => {
    const dir = workDir();
    writeFileSync(join(dir, "data"), "not a folder\n");
    const storePath = join(dir, "data", "store", "kaiawatch.db");
    const error = (await openStore(createTestCommon(), { path: storePath }).then(
      () => undefined,
      (e: unknown) => e,
    )) as (Error & { code: string }) | undefined;
    expect(error?.code).toBe("KW_STORE_NOT_WRITABLE");
    expect(error?.message).toBe(`cannot create the store folder ${join(dir, "data", "store")}: ${join(dir, "data")} is a file, not a folder; set store.path to a path inside a folder`);

    const doctor = await runCli("doctor", "--config", configAt(dir, storePath));
    expect(doctor.code).toBe(1);
    expect(storeLine(doctor.out)).toContain(`FAIL  store`);
    expect(storeLine(doctor.out)).toContain(`KW_STORE_NOT_WRITABLE: ${error?.message}`);
  });

  it("a lock file the daemon's user may not write: refused, not opened read-only without a lock", async () => {
    const dir = workDir();
    const data = join(dir, "data");
    mkdirSync(data);
    chmodSync(data, 0o777);
    const lockFile = join(data, "kaiawatch.db.lock.db");
    writeFileSync(lockFile, "");
    // Root's 0644 file for uid 1000; a 0444 file for its own user otherwise.
    chmodSync(lockFile, AS_ROOT ? 0o644 : 0o444);
    const run = await kaiawatchAsDaemonUser(["run", "--config", configAt(dir, join(data, "kaiawatch.db"))]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`KW_STORE_NOT_WRITABLE: cannot write the store file ${lockFile}: `);
    expect(run.err).toMatch(new RegExp(`uid ${DAEMON_UID}\\)? cannot open it for writing`));
    expect(existsSync(join(data, "kaiawatch.db"))).toBe(false);
  });

  it("doctor on a writable store: ok, and nothing left behind but the folder and the lock file", async () => {
    const dir = workDir();
    const storePath = join(dir, "new", "kaiawatch.db");
    const doctor = await runCli("doctor", "--config", configAt(dir, storePath));
    expect(storeLine(doctor.out)).toMatch(/^\s+ok\s+store\s/);
    expect(storeLine(doctor.out)).toContain(`${storePath}: `);
    expect(storeLine(doctor.out)).toContain(`can write files in its folder and take the store lock`);
    expect(existsSync(storePath)).toBe(false);
    expect(existsSync(`${storePath}.lock`)).toBe(false);
  });
});
