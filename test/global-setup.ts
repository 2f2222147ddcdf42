import { execFileSync } from "node:child_process";

/**
 * Tests that start `kaiawatch` as a real child process run the compiled dist/: build it
 * once per test run so that they never exercise stale code. The build is incremental
 * (tsconfig.build.json): after `npm ci`, whose `prepare` built dist/, tsc finds little to do.
 */
export default function setup(): void {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
