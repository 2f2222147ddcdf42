import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every benchmark (bench/*.bench.ts, found here, so a new one is included without a word)
 * runs at its smallest size (`--smoke`, bench/mode.ts), as `npm run bench` runs it: a
 * process of its own. Only that it runs to the end is checked; its figures mean nothing at
 * this size. A benchmark that broke (ingest, when the planner began to share sources) went
 * unnoticed until someone wanted its figures.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const benches = readdirSync(`${root}bench`).filter((f) => f.endsWith(".bench.ts")).sort();

function runBench(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // dist/ was built by the test setup (test/global-setup.ts): the benchmarks that start
    // `kaiawatch run` skip their own build.
    const env = { ...process.env, KAIAWATCH_DIST_BUILT: "1" };
    execFile(process.execPath, ["--expose-gc", "--import", "tsx", `bench/${file}`, "--smoke"], { cwd: root, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, output: `${stdout}\n${stderr}` });
    });
  });
}

/** The committed figures (bench/results/), which only a full run may write. */
function committedFigures(): Record<string, string> {
  const dir = `${root}bench/results`;
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(`${dir}/${f}`, "utf8")]));
}

describe("benchmarks, smoke run", () => {
  const before = committedFigures();

  it("finds the benchmarks", () => {
    expect(benches.length).toBeGreaterThan(5);
  });

  for (const file of benches) {
    it(`${file} runs to the end at --smoke size`, async () => {
      const { code, output } = await runBench(file);
      // The end of the output: the error and its stack when it failed.
      expect(code, output.slice(-4000)).toBe(0);
    }, 240_000);
  }

  // node-scale's smoke run once overwrote its committed table with 100 watches' figures.
  it("leaves the committed figures as they were", () => {
    expect(committedFigures()).toEqual(before);
  });
});
