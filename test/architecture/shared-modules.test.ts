import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Test files share their worker's modules (vitest.config.ts: isolate false). A module mock
 * then reaches only what is loaded after it: a file before this one may have loaded the real
 * module, and this file's mocked copies would stay behind for the next one. Whether the mock
 * took would depend on which files a worker ran before: a test that fails by chance.
 */
function mocksWithoutReload(source: string): boolean {
  const code = source.replace(/\/\/.*$/gm, "").replace(/\/\*[\s\S]*?\*\//g, "");
  return /\bvi\.(do)?mock\(/.test(code) && (code.match(/\bvi\.resetModules\(\)/g) ?? []).length < 2;
}

describe("a test file that mocks a module loads its own copies", () => {
  it("every vi.mock file reloads its modules before (and drops them after) its tests", () => {
    const files = readdirSync(join(repoRoot, "test"), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith(".test.ts"))
      .map((path) => `test/${path.split("\\").join("/")}`)
      .filter((file) => file !== "test/architecture/shared-modules.test.ts"); // its planted cases below
    // vi.resetModules() in beforeAll, then the code under test imported with await import();
    // vi.resetModules() again in afterAll (test/cli/compile-once.test.ts).
    expect(files.filter((file) => mocksWithoutReload(readFileSync(join(repoRoot, file), "utf8")))).toEqual([]);
  });

  it("refuses a planted mock without the reloads, and passes one with them", () => {
    expect(mocksWithoutReload(`vi.mock("../../src/rules/parse-condition.js", () => ({}));\nimport { runCommand } from "../src/cli/run.js";`)).toBe(true);
    expect(mocksWithoutReload(`// vi.mock("x") in a comment\nconst x = 1;`)).toBe(false);
    expect(mocksWithoutReload(`vi.mock("x");\nbeforeAll(async () => { vi.resetModules(); await import("y"); });\nafterAll(() => vi.resetModules());`)).toBe(false);
  });
});
