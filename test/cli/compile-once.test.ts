import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { writeFileSync } from "node:fs";
import { Writable } from "node:stream";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { CommandIO } from "../../src/cli/command.js";
import type * as RunCommandModule from "../../src/cli/commands/run.js";
import type * as ParseConditionModule from "../../src/rules/parse-condition.js";
import type * as BalanceConditionModule from "../../src/rules/balance-condition.js";
import { tempDir } from "../helpers/harness.js";
import { daemonFiles, simulatorHead } from "../helpers/simulator-config.js";

/** Every parse of a rule's `when`, wherever it is asked for (the compile is the one that should). */
const parses = vi.hoisted(() => ({ conditions: 0, balances: 0 }));
vi.mock("../../src/rules/parse-condition.js", async (importOriginal) => {
  const actual = await importOriginal<typeof ParseConditionModule>();
  return { ...actual, parseCondition: (...args: Parameters<typeof actual.parseCondition>) => (parses.conditions++, actual.parseCondition(...args)) };
});
vi.mock("../../src/rules/balance-condition.js", async (importOriginal) => {
  const actual = await importOriginal<typeof BalanceConditionModule>();
  return { ...actual, parseBalanceCondition: (...args: Parameters<typeof actual.parseBalanceCondition>) => (parses.balances++, actual.parseBalanceCondition(...args)) };
});

let sim: Simulator;
let runCommand: typeof RunCommandModule.runCommand;
const dir = tempDir("kaiawatch-compile-once-");
beforeAll(async () => {
  // Test files share their worker's modules (vitest.config.ts: isolate false), so a file before
  // this one may have loaded the rules with the real parsers: the command and all it imports are
  // loaded again here, through the mocks above, and dropped again after.
  vi.resetModules();
  ({ runCommand } = await import("../../src/cli/commands/run.js"));
  sim = await createSimulator({ seed: 7, initialBlocks: 20, blockTime: 0, density: { eventLogs: 4, nftTransfers: 2, internalTransactions: 2 } });
});
afterAll(async () => {
  await sim.close();
  dir.remove();
  vi.resetModules();
});

/** `run` in this process, its log read as it is written: a test awaits a line, not a time. */
function startRun(configPath: string) {
  const controller = new AbortController();
  let log = "";
  const waiters: Array<{ text: string; count: number; resolve: () => void }> = [];
  const seen = (text: string) => log.split(text).length - 1;
  const stderr = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      log += chunk.toString();
      for (const waiter of waiters.splice(0)) {
        if (seen(waiter.text) >= waiter.count) waiter.resolve();
        else waiters.push(waiter);
      }
      callback();
    },
  });
  let reload: () => void = () => {};
  const io: CommandIO = {
    stdout: new Writable({ write: (_chunk, _encoding, callback) => callback() }),
    stderr,
    env: {},
    signal: controller.signal,
    onReload(listener) {
      reload = listener;
      return () => (reload = () => {});
    },
  };
  const exit = runCommand.run(["--config", configPath, "--log-format", "json"], io);
  return {
    exit,
    log: () => log,
    /** Resolves once `text` has been logged `count` times; rejects with the log when run exits first. */
    logged: (text: string, count = 1) =>
      Promise.race([
        new Promise<void>((resolve) => (seen(text) >= count ? resolve() : waiters.push({ text, count, resolve }))),
        exit.then((code) => Promise.reject(new Error(`run exited (${code}) before logging "${text}":\n${log}`))),
      ]),
    reload: () => reload(),
    stop: () => controller.abort(),
  };
}

describe("the config's compile", () => {
  it("parses each rule's when once at load and once at each reload; the daemon, its plan and its schedules read that compile", async () => {
    const { storePath, alertsPath, configPath } = daemonFiles(dir.path);
    const config = (rules: string) => `
${simulatorHead(sim, { storePath })}
defaults: { schedule: "*/5 * * * * *", jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}", schedule: "*/10 * * * * *" }
  - { name: collection, collection: "${sim.addresses.busyCollection}" }
  - { name: payer, balance: ["${sim.addresses.busyToken}"], schedule: "0 * * * * *" }
rules:
${rules}
sinks: { out: { type: file, path: "${alertsPath}" } }
`;
    const rules = `  - { name: token-logs, watch: token, when: { event: Transfer }, notify: [out] }
  - { name: collection-in, watch: collection, when: { token_id: { ne: "0" } }, notify: [out] }
  - { name: payer-low, watch: payer, when: { balance: { lt: "1 KAIA" } }, notify: [out] }`;
    writeFileSync(configPath, config(rules));
    const run = startRun(configPath);
    try {
      await run.logged("kaiawatch running");
      // Loaded, checked, planned, scheduled, started: two record rules, one balance rule, one parse each.
      expect(parses).toEqual({ conditions: 2, balances: 1 });

      run.reload();
      await run.logged("config reloaded");
      expect(parses).toEqual({ conditions: 4, balances: 2 });

      // A bad reload is compiled (that is how it is refused) and the running compile stays: nothing is parsed again for it.
      writeFileSync(configPath, config(`${rules}\n  - { name: typo, watch: token, when: { tpye: Transfer }, notify: [out] }`));
      run.reload();
      await run.logged("reload refused");
      expect(run.log()).toContain("tpye");
      expect(parses).toEqual({ conditions: 7, balances: 3 });
    } finally {
      run.stop();
      expect(await run.exit).toBe(0);
    }
  });
});
