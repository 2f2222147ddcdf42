import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * The longest test files, longest first (measured with `vitest run --reporter=json`). On a
 * fresh clone vitest has no durations cached and would start them in any order; one of them
 * started last keeps a single core busy while the other idles, so they start first.
 */
const LONGEST_FIRST = [
  "test/replicas/chaos.e2e.test.ts",
  "test/bench/smoke.test.ts",
  "test/daemon/torture-short.test.ts",
  "test/store/crash.test.ts",
  "test/watch/crash.test.ts",
  "test/watch/engine.test.ts",
  "test/config/fuzz.test.ts",
  "test/notify/e2e-sigkill.test.ts",
  "test/watch/shared-sources.test.ts",
  "test/notify/dispatcher.test.ts",
  "test/config/load-config-worker.test.ts",
  "test/status/page.e2e.test.ts",
  "test/cli/replay.test.ts",
  "test/ops/pack-install.test.ts",
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup/fast-check-seed.ts"],
    // Two cores on CI: forks keep child-process and server tests isolated. Three workers, said
    // explicitly: left to itself, vitest 4.1 ran one file at a time on this two-core machine
    // (four files sleeping 5 s each took 20 s; with maxWorkers 2, 10 s). With two, the cores
    // stood idle a fifth of the run while tests waited on child processes, PostgreSQL and
    // leases (1.6 cores busy on average): a third worker fills that time.
    pool: "forks",
    // A worker keeps the modules it has loaded from one test file to the next. Loading them
    // again for every file took about 0.8 s a file: 202 s summed over 264 files (vitest's
    // "import"), in a run of 405 s on two cores; without it, 29 s in a run of 290 s.
    // A file that mocks a module loads its own copies (vi.resetModules(), as compile-once
    // does), and stops the processes, servers and timers it starts (docs/development.md).
    isolate: false,
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
