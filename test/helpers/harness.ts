import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createTestCommon } from "../../src/common/common.js";
import type { Common } from "../../src/common/common.js";
import { ConfigError, parseConfigText, type Config, type LoadedConfig } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { checkedSchedule, type Schedule } from "../../src/config/schedule.js";
import { OPERATIONAL_ALERT_SOURCE, type AlertDocument } from "../../src/model/alert-document.js";
import { NORMALIZERS } from "../../src/watch/normalize.js";
import type { CommandIO } from "../../src/cli/command.js";

export function tempDir(prefix = "kaiawatch-test-"): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A validated config from YAML text, with the same checks `run` applies. */
export function configFromText(text: string, env: NodeJS.ProcessEnv = {}): Config {
  return loadedFromText(text, env).config;
}

/** configFromText with the loader's compile of it (and its secrets). */
export function loadedFromText(text: string, env: NodeJS.ProcessEnv = {}): LoadedConfig {
  try {
    return parseConfigText(text, { fileName: "test.yaml", env, checks: CONFIG_CHECKS });
  } catch (error) {
    // Show every problem in the test output, not just "N errors".
    if (error instanceof ConfigError) throw new Error(`${error.message}\n${error.format()}`);
    throw error;
  }
}

/** The schedules of these pollers compiled, as CompiledConfig.schedules gives them to the engine. */
export function schedulesOf(pollers: ReadonlyArray<{ source: { schedule: string } }>): Map<string, Schedule> {
  return new Map(pollers.map(({ source }) => [source.schedule, checkedSchedule(source.schedule)]));
}

export function quietCommon(overrides: Partial<Common> = {}): Common {
  return createTestCommon(overrides);
}

/** The identity key of the record an alert was made from: what "no gap, no duplicate" is counted in. */
export function recordKeyOf(alert: AlertDocument): string {
  if (alert.source === OPERATIONAL_ALERT_SOURCE || alert.source === "balances") throw new Error(`alert ${alert.id} is kaiawatch's own operational alert: it was made from no record`);
  return NORMALIZERS[alert.source](alert.record as never).key;
}

export function readJsonLines<T = AlertDocument>(path: string): T[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  // Only whole lines: read while a daemon appends, the text after the last newline may be
  // half of a line still being written.
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** CommandIO with in-memory streams, for running commands through main(). */
export function memoryIO(env: NodeJS.ProcessEnv = {}, signal: AbortSignal = new AbortController().signal): CommandIO & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        append(chunk.toString());
        callback();
      },
    });
  return {
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    env,
    signal,
    out: () => out,
    err: () => err,
  };
}

/** Keys that occur more than once. */
export function repeated(keys: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const key of keys) (seen.has(key) ? twice : seen).add(key);
  return [...twice];
}

/** A stream for a JSON logger and the lines written to it, parsed. */
export function logCapture(): { destination: Writable; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { destination, lines };
}
