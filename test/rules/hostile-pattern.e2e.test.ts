import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { compileSafePattern } from "../../src/rules/safe-regexp.js";
import { capText } from "../../src/families/cap-record.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { Cursor } from "../../src/store/types.js";
import { readOnDisk } from "../store/fixtures/on-disk.js";
import { startKaiawatch, waitForStatusUrl } from "../helpers/child.js";
import { readJsonLines, tempDir } from "../helpers/harness.js";
import { daemonFiles, simulatorHead } from "../helpers/simulator-config.js";
import { addFailedCalls } from "../notify/e2e-support.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * Issue 20, item 1, end to end: `kaiawatch run` as a real process, rules whose patterns
 * freeze a backtracking engine (`(a|aa)+$` took seconds on 50 characters and ignored
 * SIGTERM), and internal transactions from the simulator whose revert messages are built to
 * trigger it: 50 and 60 "a"s with and without "!", and 100 KB ones. The status server must
 * answer /healthz throughout, every record must be evaluated (the cursor passes the block and
 * each rule fires exactly on the messages RE2 says it matches), and SIGTERM must stop it.
 */
const PATTERNS = { alternation: "/(a|aa)+$/", duplicate: "(a|a)*$", stars: ".*.*.*.*.*.*x", nested: "(a+)+$" } as const;
const MESSAGES = [
  `${"a".repeat(50)}!`,
  "a".repeat(60),
  `${"a".repeat(120)}x!`,
  `${"a".repeat(100 * 1024 - 1)}!`, // cut at 16,384 characters when the record enters: "a"s, then the cut's mark
  `${"!".repeat(100 * 1024 - 60)}${"a".repeat(60)}`, // the "a"s are past the cut
];
/** A generous bound per request so that a busy CI machine cannot fail it by chance; a frozen daemon never answers. */
const HEALTHZ_TIMEOUT_MS = 5_000;

const byNumber = (a: number, b: number) => a - b;

let sim: Simulator;
let hostileBlock: number;
const dir = tempDir("kaiawatch-hostile-pattern-");

beforeAll(async () => {
  sim = await createSimulator({ seed: 31, initialBlocks: 20 }); // frozen: blocks come only from the test
  hostileBlock = addFailedCalls(sim, MESSAGES);
});
afterAll(async () => {
  await sim?.close();
  dir.remove();
});

describe("a hostile revert message against a pattern that freezes a backtracking engine", () => {
  it("is evaluated while /healthz keeps answering, and SIGTERM stops the daemon", async () => {
    const { storePath, alertsPath, configPath } = daemonFiles(dir.path);
    const rules = Object.entries(PATTERNS).map(
      ([name, pattern]) => `  - { name: ${name}, watch: wallet, when: { fail_message: { matches: ${JSON.stringify(pattern)} } }, notify: [out] }`,
    );
    writeFileSync(
      configPath,
      `
${simulatorHead(sim, { storePath, listen: "127.0.0.1:0", requestsPerSecond: 500 })}
defaults: { schedule: "* * * * * *", start: ${hostileBlock - 5}, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
${rules.join("\n")}
sinks:
  out: { type: file, path: "${alertsPath}" }
`,
    );

    // What RE2 says, per rule, over every internal transaction the daemon will read.
    const records = sim.truth.accountInternalTransactions(sim.addresses.busyWallet, { from: hostileBlock - 5, to: sim.head() });
    const expected = Object.fromEntries(
      Object.entries(PATTERNS).map(([name, pattern]) => {
        const compiled = compileSafePattern(pattern);
        if (!compiled.ok) throw new Error(compiled.message);
        // The daemon cuts each text as its record enters (capText): the rules see what is kept.
        const kept = records.map((r) => r.transaction_status?.fail_message).filter((m) => typeof m === "string").map(capText);
        return [name, kept.filter((m) => compiled.pattern.test(m)).map((m) => m.length).sort(byNumber)];
      }),
    );
    // As RE2 semantics say: a match must end the (read part of the) text.
    // The 100 KB run of "a"s ends with the cut's mark once cut, so `$` no longer follows an "a".
    expect(expected.alternation).toEqual([60]);
    expect(expected.stars).toContain(122); // "x" somewhere: the simulator's own messages may have one too

    const child = startKaiawatch(["run", "--config", configPath, "--log-format", "json"]);
    let healthChecks = 0;
    try {
      const url = await waitForStatusUrl(child);
      const healthy = async () => {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_TIMEOUT_MS) });
        expect(response.status).toBe(200);
        healthChecks++;
      };
      const evaluated = () => {
        let cursors: Cursor[];
        try {
          cursors = Object.values(readOnDisk(storePath).cursors);
        } catch {
          return false; // not created yet
        }
        // The planner reads the wallet through operation 8 (FREE plan): its cursor, and the wallet's position beside it.
        return cursors.length > 0 && cursors.every((c) => c.block >= hostileBlock);
      };
      const delivered = () => {
        try {
          return readJsonLines<AlertDocument>(alertsPath);
        } catch {
          return [];
        }
      };
      const wanted = Object.values(expected).reduce((n, hits) => n + hits.length, 0);
      // Health is asked throughout, one request after another, while the block is evaluated.
      await healthy();
      await waitFor(async () => {
        await healthy();
        return evaluated() && delivered().length >= wanted;
      }, 60_000, "the block evaluated and its alerts delivered").catch((error: unknown) => {
        throw new Error(`${(error as Error).message}: ${child.stderr().slice(-2000)}`);
      });
      await healthy();
      const fired = Object.fromEntries(Object.keys(PATTERNS).map((name) => [name, [] as number[]]));
      for (const alert of delivered()) {
        const message = (alert.record as { transaction_status?: { fail_message?: string } }).transaction_status?.fail_message ?? "";
        fired[alert.rule]?.push(message.length);
      }
      for (const name of Object.keys(fired)) fired[name]?.sort(byNumber);
      expect(fired).toEqual(expected);
    } finally {
      child.process.kill("SIGTERM");
    }
    await waitFor(() => child.process.exitCode !== null || child.process.signalCode !== null, 15_000, "kaiawatch to exit after SIGTERM").catch((error: unknown) => {
      child.process.kill("SIGKILL");
      throw error;
    });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(healthChecks).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
