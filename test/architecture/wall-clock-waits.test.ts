import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findWallClockWaits } from "./wall-clock-waits.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The one documented helper that may wait on the clock: for child processes, servers, databases. */
const HELPER = "test/helpers/wait-for.ts";

function testFiles(): string[] {
  return readdirSync(join(repoRoot, "test"), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => `test/${path.split("\\").join("/")}`)
    .sort();
}

describe("tests never wait on the machine's clock for an outcome", () => {
  it("no test file outside the helper waits on the clock", () => {
    const found: string[] = [];
    for (const file of testFiles()) {
      if (file === HELPER) continue;
      for (const wait of findWallClockWaits(file, readFileSync(join(repoRoot, file), "utf8"))) found.push(`${file}:${wait.line}: ${wait.why}: ${wait.text}`);
    }
    // Await an event, a promise the code resolves, or an injected clock the test steps. A child
    // process, a server or a database is polled with waitFor() from test/helpers/wait-for.ts,
    // which also holds the other uses of real time a test may make: faultMoment, workFor, observeFor.
    expect(found).toEqual([]);
  });

  it("finds each planted form of a wall-clock wait, and passes over what only looks like one", () => {
    const planted = `
      async function t() {
        while (server.requests.length < 5) await new Promise((r) => setTimeout(r, 5));
        await sleep(150);
        await setTimeout(20);
        await vi.waitFor(() => expect(x).toBe(1));
        await Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 1000))]);
        do { await (new Promise((resolve) => { setTimeout(resolve, 10); })); } while (!done);
        await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(3);
      }`;
    expect(findWallClockWaits("planted.ts", planted).map((w) => [w.line, w.why])).toEqual([
      [3, "awaits a promise that a timer resolves"],
      [4, "sleeps with sleep()"],
      [5, "sleeps with setTimeout()"],
      [6, "polls with vi.waitFor"],
      [7, "races the outcome against a timer"],
      [8, "awaits a promise that a timer resolves"],
      [9, "polls with expect.poll"],
    ]);
    const lookalikes = `
      // await sleep(100) in a comment
      const text = "await new Promise((r) => setTimeout(r, 5))";
      async function t() {
        await new Promise((resolve) => setImmediate(resolve));
        await server.requestsArrived(5);
        await clock.advance(1000);
        const timer = setTimeout(() => controller.abort(), 10);
        await expect(pending).rejects.toThrow("aborted");
      }`;
    expect(findWallClockWaits("lookalikes.ts", lookalikes)).toEqual([]);
  });
});
