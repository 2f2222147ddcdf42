import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup/fast-check-seed.ts"],
    // Two cores on CI: forks keep child-process and server tests isolated.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
