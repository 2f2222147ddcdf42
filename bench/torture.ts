/**
 * `npm run torture [-- --minutes N] [--seed S] [--min-kills K] [--seed-delivered N] [--keep DIR]`: kaiawatch under
 * explorer faults, failing and vanishing sinks, and SIGKILL at random moments, judged against
 * the simulator's ground truth. Prints the summary and writes bench/results/torture.json and
 * .md; exits 1 when an alert was lost, a block skipped, or a duplicate came under a new id.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { machineInfo } from "./lib.js";
import { runTorture } from "./torture/run-torture.js";
import { summaryMarkdown } from "./torture/summary.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    seed: { type: "string" },
    "min-kills": { type: "string", default: "50" },
    // The store starts with this many delivered alerts, so that the kills land on a store the size a busy feed reaches in a week.
    "seed-delivered": { type: "string", default: "100000" },
    keep: { type: "string" },
    "no-results": { type: "boolean", default: false },
  },
});
const minutes = Number(values.minutes);
const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
const minKills = Number(values["min-kills"]);
const seedDelivered = Number(values["seed-delivered"]);
if (!(minutes > 0) || !Number.isInteger(seed) || !(minKills >= 0) || !(Number.isInteger(seedDelivered) && seedDelivered >= 0)) {
  console.error("usage: npm run torture -- [--minutes N] [--seed S] [--min-kills K] [--seed-delivered N] [--keep DIR] [--no-results]");
  process.exit(2);
}

// The daemon runs as the compiled CLI: build it so that the torture never exercises stale code.
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit", cwd: new URL("..", import.meta.url) });

console.log(`torture: ${minutes} min of chaos, at least ${minKills} kills, seed ${seed}, ${seedDelivered} delivered alerts in the store at start`);
const summary = await runTorture({ durationMs: minutes * 60_000, minKills, seed, seedDelivered, progress: (line) => console.log(line), workDir: values.keep });
const machine = machineInfo();
const command = `npm run torture -- --minutes ${minutes} --min-kills ${minKills} --seed-delivered ${seedDelivered}`;
const markdown = summaryMarkdown(summary, machine, command);
console.log(`\n${markdown}`);
if (!values["no-results"]) {
  const dir = new URL("./results/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL("torture.json", dir), `${JSON.stringify({ name: "torture", command, machine, summary }, null, 2)}\n`);
  writeFileSync(new URL("torture.md", dir), markdown);
}
process.exit(summary.ok ? 0 : 1);
