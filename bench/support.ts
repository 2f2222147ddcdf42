/** Small helpers the benchmarks share (the report itself is in lib.ts). */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseConfigText } from "../src/config/index.js";
import type { Config } from "../src/config/types.js";
import { CONFIG_CHECKS } from "../src/daemon/config-checks.js";

/** A validated config, with the checks `kaiawatch run` applies, from a plain object (YAML is a superset of JSON). */
export function configOf(document: unknown, options: { maxBytes?: number } = {}): Config {
  return parseConfigText(JSON.stringify(document), { fileName: "bench.yaml", env: {}, checks: CONFIG_CHECKS, ...options }).config;
}

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The value below which `p` (0..1) of the sorted values lie (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** "load average 1.2, 0.9, 0.7 on 2 cores": shared machines make every figure depend on it. */
export function loadNote(when: string): string {
  return `Load average ${when}: ${loadavg().map((l) => l.toFixed(2)).join(", ")} (1, 5, 15 min).`;
}

/** mulberry32: a seeded generator, so that every run measures the same work. */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const round = (value: number, digits = 0): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Compiles dist/ (as the test setup does), so that benchmarks of the real CLI process
 * measure the current source and not a stale build. Returns the path of the CLI. The smoke
 * runs of `npm test` skip it (KAIAWATCH_DIST_BUILT=1): the test setup has just built dist/,
 * and a second tsc per benchmark would cost seconds each.
 */
export function buildDist(): string {
  const root = fileURLToPath(new URL("..", import.meta.url));
  if (process.env.KAIAWATCH_DIST_BUILT !== "1") execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  return join(root, "dist", "cli", "bin.js");
}
