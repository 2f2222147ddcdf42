import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { openStore } from "../../src/store/open-store.js";
import { processState } from "../../src/store/store-lock.js";
import { cursor } from "./fixtures/sample.js";
import { storeFilePerTest } from "./fixtures/store-file.js";
import { waitFor } from "../helpers/wait-for.js";

const OPEN_FIXTURE = new URL("./fixtures/open.ts", import.meta.url).pathname;

const file = storeFilePerTest();

/** Runs `open.ts` on the store in a separate node process. */
function openInChild(...args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", OPEN_FIXTURE, file.path, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

/** The pid of a process that has run and been reaped: certainly dead. */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve(child.pid as number));
  });
}

/**
 * A zombie: `sh` starts a child that waits on fd 3, then execs `sleep`, which never waits for
 * its children. Only then does the test close fd 3: the child exits under `sleep` and stays a
 * zombie (state Z) that still answers kill(pid, 0). The child cannot exit before the exec, so
 * the shell can never reap it first, however busy the machine.
 */
async function zombie(): Promise<{ pid: number; stop: () => void }> {
  const parent = spawn("sh", ["-c", "read x <&3 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore", "pipe"] });
  const pid = await new Promise<number>((resolve, reject) => {
    parent.stdout!.setEncoding("utf8").once("data", (chunk: string) => resolve(Number(chunk.trim())));
    parent.on("error", reject);
  });
  const comm = () => {
    try {
      return readFileSync(`/proc/${parent.pid}/comm`, "utf8").trim();
    } catch {
      return undefined;
    }
  };
  // Polled for the events themselves (the exec, the exit), which come however long they take.
  await waitFor(() => comm() === "sleep", 30_000, "the shell to exec sleep");
  (parent.stdio[3] as NodeJS.WritableStream).end();
  await waitFor(() => processState(pid) === "Z", 30_000, `process ${pid} to become a zombie`);
  return { pid, stop: () => parent.kill("SIGKILL") };
}

function capturingCommon() {
  const lines: string[] = [];
  const destination = new PassThrough();
  destination.setEncoding("utf8").on("data", (chunk: string) => lines.push(chunk));
  const common = createTestCommon({ logger: createLogger({ redactor: createSecretRedactor(), destination, level: "warn" }) });
  return { common, lines };
}

function writeLock(owner: { pid: number; hostname: string; started_at: string }) {
  writeFileSync(`${file.path}.lock`, JSON.stringify(owner));
}

describe("the store lock", () => {
  it("writes pid, hostname and start time beside the store and removes it on close", async () => {
    const store = await openStore(createTestCommon(), { path: file.path });
    const lock = JSON.parse(readFileSync(`${file.path}.lock`, "utf8")) as Record<string, unknown>;
    expect(lock).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(Date.parse(lock.started_at as string)).toBeLessThanOrEqual(Date.now());
    await store.close();
    expect(existsSync(`${file.path}.lock`)).toBe(false);
  });

  it("refuses a second process while the store is open, naming the holder's pid", async () => {
    const store = await openStore(createTestCommon(), { path: file.path });
    file.track(store);
    await store.setCursor(cursor("s1", 4));
    const second = await openInChild();
    expect(second.code).toBe(3);
    expect(second.stdout).toMatch(new RegExp(`^KW_STORE_LOCKED .*process ${process.pid}\\b`));
    // The refused process touched nothing; a read-only open still works beside the holder.
    expect(JSON.parse(readFileSync(`${file.path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    expect(await openInChild("--read-only")).toEqual({ code: 0, stdout: "opened 1\n" });
    // Once closed, the other process gets in.
    await store.close();
    expect(await openInChild()).toEqual({ code: 0, stdout: "opened 1\n" });
  });

  it("refuses a second process while the kernel lock is held, whatever the lock file says (no pid arithmetic lets it in)", async () => {
    const store = await openStore(createTestCommon(), { path: file.path });
    file.track(store);
    // The lock file now names a dead process: by pids alone the lock would be stale.
    writeLock({ pid: await deadPid(), hostname: hostname(), started_at: "2025-01-01T00:00:00.000Z" });
    const second = await openInChild();
    expect(second.code).toBe(3);
    expect(second.stdout).toMatch(/^KW_STORE_LOCKED the store .* is in use by process \d+/);
    await store.setCursor(cursor("s1", 5)); // the holder goes on writing
  });

  it("refuses a second open of the same store within one process", async () => {
    file.track(await openStore(createTestCommon(), { path: file.path }));
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({ code: "KW_STORE_LOCKED" });
  });

  it("takes over a stale lock whose process is dead, with a warning", async () => {
    const pid = await deadPid();
    writeLock({ pid, hostname: hostname(), started_at: "2025-01-01T00:00:00.000Z" });
    const { common, lines } = capturingCommon();
    const store = await openStore(common, { path: file.path });
    file.track(store);
    expect(JSON.parse(readFileSync(`${file.path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    const warning = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.pid === pid);
    expect(warning).toMatchObject({ level: 40, msg: expect.stringContaining("stale store lock") });
  });

  it.skipIf(process.platform !== "linux")("takes over a lock whose process is a zombie (it answers kill(pid, 0) but is dead)", async () => {
    const z = await zombie();
    try {
      expect(processState(z.pid)).toBe("Z");
      writeLock({ pid: z.pid, hostname: hostname(), started_at: "2025-01-01T00:00:00.000Z" });
      const store = await openStore(createTestCommon(), { path: file.path });
      file.track(store);
      expect(JSON.parse(readFileSync(`${file.path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    } finally {
      z.stop();
    }
  });

  it("takes over a lock naming this very pid that this process does not hold (a restarted container's PID 1)", async () => {
    writeLock({ pid: process.pid, hostname: hostname(), started_at: "2025-01-01T00:00:00.000Z" });
    const store = await openStore(createTestCommon(), { path: file.path });
    file.track(store);
    expect(JSON.parse(readFileSync(`${file.path}.lock`, "utf8"))).toMatchObject({ started_at: expect.not.stringMatching(/^2025-01-01T00:00:00/) });
  });

  it("refuses a lock held on another host, which it cannot check", async () => {
    writeLock({ pid: 12345, hostname: "other-host.example", started_at: "2025-01-01T00:00:00.000Z" });
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({
      code: "KW_STORE_LOCKED",
      message: expect.stringContaining("process 12345 on host other-host.example"),
    });
    expect(existsSync(`${file.path}.lock`)).toBe(true);
  });

  it("refuses a lock file it cannot read rather than guess", async () => {
    writeFileSync(`${file.path}.lock`, "");
    await expect(openStore(createTestCommon(), { path: file.path })).rejects.toMatchObject({ code: "KW_STORE_LOCKED", message: expect.stringContaining("remove it") });
  });
});
