import { mkdirSync, writeFileSync } from "node:fs";
import * as os from "node:os";

/** The machine a benchmark ran on: results from shared, noisy machines mean little without it. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    date: new Date().toISOString(),
  };
}

export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** The same quantity measured in the same run for a baseline, when the figure is a ratio to it. */
  baseline?: number;
  target?: string;
  ok?: boolean;
}

/**
 * Print the figures and the machine, and write them to bench/results/NAME.json and .md
 * (unless `write: false`).
 */
export function report(name: string, figures: BenchFigure[], notes: string[] = [], options: { write?: boolean } = {}): void {
  const machine = machineInfo();
  const lines = [
    `## ${name}`,
    "",
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.platform}, Node ${machine.node}, ${machine.date}`,
    "",
    "| figure | value | unit | baseline | target | met |",
    "| --- | ---: | --- | ---: | --- | --- |",
    ...figures.map((f) => `| ${f.name} | ${fmt(f.value)} | ${f.unit} | ${f.baseline === undefined ? "" : fmt(f.baseline)} | ${f.target ?? ""} | ${f.ok === undefined ? "" : f.ok ? "yes" : "NO"} |`),
    ...(notes.length ? ["", ...notes.map((n) => `- ${n}`)] : []),
    "",
  ];
  console.log(lines.join("\n"));
  // A shortened development run (e.g. --quick) prints but leaves the committed figures alone.
  if (options.write === false) return;
  const dir = new URL("./results/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify({ name, machine, figures, notes }, null, 2)}\n`);
  writeFileSync(new URL(`${name}.md`, dir), lines.join("\n"));
}

function fmt(value: number): string {
  return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toLocaleString("en-US", { maximumFractionDigits: 3 });
}
