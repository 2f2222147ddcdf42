import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/explorer/operations.js";
import { BIN } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";
import { configOfBanner } from "../helpers/simulator-banner.js";

/**
 * README's "First run with a real key", run as written: every command of its fenced `sh`
 * blocks, in order, against `kaiawatch simulate` started here on 127.0.0.1 with a key, in a
 * folder holding the config.yaml the simulator prints. What the README leaves to the reader
 * is filled in: `export KAIASCAN_API_KEY=…` gets the simulator's key, NAME the config's rule,
 * `npx kaiawatch` is the compiled dist/. A step that exits non-zero fails the test; `run` must
 * come up (its "kaiawatch running" line) and stop cleanly on SIGTERM. Every wait is on the
 * child's output or exit.
 */

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const KEY = "readme-first-run-key";

/** The section under `## First run with a real key`, up to the next `## ` heading. */
function firstRunSection(): string {
  const start = README.indexOf("\n## First run with a real key\n");
  if (start === -1) throw new Error('README.md has no "## First run with a real key" section');
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end === -1 ? README.length : end);
}

/** The lines of the section's fenced sh blocks (indented under list items or not), comments and blanks left out. */
function shellLines(section: string): string[] {
  const lines: string[] = [];
  for (const block of section.matchAll(/^([ \t]*)```(?:sh|bash|shell)\n([\s\S]*?)^\1```$/gm)) {
    for (const line of (block[2] ?? "").split("\n")) {
      const text = line.trim();
      if (text !== "" && !text.startsWith("#")) lines.push(text);
    }
  }
  return lines;
}

interface Finished {
  code: number | null;
  out: string;
  err: string;
}

/** Collects a child's output; `until` resolves when `seen` accepts its output so far, or when it exits. */
function watch(child: ChildProcess) {
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((listener) => listener());
  child.stdout?.on("data", (chunk: Buffer) => ((out += chunk.toString()), changed()));
  child.stderr?.on("data", (chunk: Buffer) => ((err += chunk.toString()), changed()));
  const exited = new Promise<Finished>((resolve) => child.on("close", (code) => resolve({ code, out, err })));
  const until = (seen: (out: string, err: string) => boolean) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (!seen(out, err)) return;
        listeners.delete(check);
        resolve(true);
      };
      listeners.add(check);
      void exited.then(() => (listeners.delete(check), resolve(seen(out, err))));
      check();
    });
  return { exited, until, output: () => `stdout:\n${out}\nstderr:\n${err}` };
}

describe("README: First run with a real key", () => {
  const dir = tempDir("kaiawatch-readme-first-run-");
  let simulator: ChildProcess | undefined;
  let rule = "";

  beforeAll(async () => {
    simulator = spawn(process.execPath, [BIN, "simulate", "--port", "0", "--host", "127.0.0.1", "--api-key", KEY], { stdio: ["ignore", "pipe", "pipe"] });
    const sim = watch(simulator);
    let banner = "";
    const up = await sim.until((out) => ((banner = out), out.includes("Stop with Ctrl-C.")));
    if (!up) throw new Error(`kaiawatch simulate did not start: ${sim.output()}`);
    // The status server on a port of its own: the machine is shared, 9464 may be taken.
    writeFileSync(join(dir.path, "config.yaml"), `${configOfBanner(banner)}status: { listen: "127.0.0.1:0" }\n`);
    rule = /- \{ name: ([\w-]+), watch:/.exec(banner)?.[1] ?? "";
    expect(rule, "the simulator's config names a rule").not.toBe("");
  });

  afterAll(async () => {
    if (simulator !== undefined && simulator.exitCode === null) {
      const gone = once(simulator, "close");
      simulator.kill("SIGTERM");
      await gone;
    }
    dir.remove();
  });

  it("runs every step, in order, against the simulator", { timeout: 120_000 }, async () => {
    const steps = shellLines(firstRunSection());
    expect(steps.filter((step) => step.startsWith("npx kaiawatch ")).map((step) => step.split(" ")[2]), "the steps the README lists").toEqual(["doctor", "validate", "plan", "replay", "run"]);
    const env: NodeJS.ProcessEnv = { ...process.env };
    // What the README says to bring oneself, as the simulator has it.
    const own: Record<string, string> = { KAIASCAN_API_KEY: KEY };
    for (const step of steps) {
      const exported = /^export ([A-Z_]+)=(.*)$/.exec(step);
      if (exported !== null) {
        const [, name = "", value = ""] = exported;
        env[name] = value === "…" ? own[name] : value;
        expect(env[name], `a value for ${name}`).toBeDefined();
        continue;
      }
      expect(step, "a step is a kaiawatch command").toMatch(/^npx kaiawatch /);
      const args = step.replace(/^npx kaiawatch /, "").split(/\s+/).map((arg) => (arg === "NAME" ? rule : arg));
      const child = spawn(process.execPath, [BIN, ...args], { cwd: dir.path, env, stdio: ["ignore", "pipe", "pipe"] });
      const proc = watch(child);
      if (args[0] === "run") {
        // The daemon: it must come up, then stop cleanly.
        const running = await proc.until((_out, err) => err.includes('"msg":"kaiawatch running"'));
        expect(running, `${step} came up: ${proc.output()}`).toBe(true);
        child.kill("SIGTERM");
      }
      const { code } = await proc.exited;
      expect(code, `${step} exits 0: ${proc.output()}`).toBe(0);
    }
  });

  it("explains the explorer's operation numbers and its plans where it first uses them", () => {
    const first = README.search(/operation \d+|PRO_PLUS/);
    const paragraph = README.slice(README.lastIndexOf("\n\n", first) + 2, README.indexOf("\n\n", first));
    const used = [...new Set([...README.matchAll(/operation[ -](\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
    expect(used.length).toBeGreaterThan(0);
    const byNumber = new Map<number, string>(Object.entries(OPERATIONS).map(([name, operation]) => [operation.number, name]));
    for (const number of used) expect(paragraph, `operation ${number} is named where the README first uses one`).toMatch(new RegExp(`\\b${number}\\s+\\(\`${byNumber.get(number)}\``));
    expect(paragraph, "PRO_PLUS is said to be a plan where first used").toMatch(/plan\s+is\s+`FREE`\s+or\s+`PRO_PLUS`/);
  });
});
