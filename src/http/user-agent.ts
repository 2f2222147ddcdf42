import { readFileSync } from "node:fs";

/**
 * `kaiawatch/<version>`. package.json sits two levels above both src/explorer (tests, tsx)
 * and dist/explorer (the built package), so one relative URL serves both.
 */
export const USER_AGENT = `kaiawatch/${readVersion()}`;

function readVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const version = (pkg as { version?: unknown }).version;
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
