import { execFileSync } from "node:child_process";
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { CHROMIUM, CHROMIUM_ARGS, HAS_CHROMIUM } from "./helpers/chromium.js";

/**
 * Tests that start `kaiawatch` as a real child process run the compiled dist/: build it
 * once per test run so that they never exercise stale code. The build is incremental
 * (tsconfig.build.json): after `npm ci`, whose `prepare` built dist/, tsc finds little to do.
 * The status page's browser tests share one Chromium, started here (test/helpers/browser.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
  const browser = HAS_CHROMIUM ? await chromium.launchServer({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }) : undefined;
  project.provide("chromiumEndpoint", browser?.wsEndpoint() ?? "");
  return async () => {
    await browser?.close();
  };
}
