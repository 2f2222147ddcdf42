import { defineConfig } from "vitest/config";

// `npm run test:replicas`: the three-replica chaos test, outside `npm test` while it fails (see vitest.config.ts).
export default defineConfig({
  test: {
    include: ["test/replicas/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
