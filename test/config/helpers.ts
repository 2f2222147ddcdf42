import { expect } from "vitest";
import { ConfigError } from "../../src/config/index.js";

/** The ConfigError `run` throws; fails the test when it throws nothing or something else. */
export function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError, but the config was accepted");
}

export const ADDRESS_A = "0x1111111111111111111111111111111111111111";
export const ADDRESS_B = "0x2222222222222222222222222222222222222222";

/** 1-based line and column of the first occurrence of `needle`. */
export function positionIn(text: string, needle: string, from = 0): { line: number; column: number } {
  const offset = text.indexOf(needle, from);
  if (offset === -1) throw new Error(`"${needle}" not in text`);
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
}

/**
 * An assertion over a ConfigError of `text` (as test.yaml): `at(needle, path, message)` finds
 * the issue of that key path and message and checks that it names the line of `needle`.
 */
export function issueAt(text: string, error: ConfigError): (needle: string, path: string, message: string) => void {
  const lines = error.format().split("\n");
  return (needle, path, message) => {
    const { line } = positionIn(text, needle);
    const found = lines.find((l) => l.includes(` ${path}: `) && l.includes(message));
    expect(found, `${path}: ${message}\n${lines.join("\n")}`).toBeDefined();
    expect(found).toMatch(new RegExp(`^test\\.yaml:${line}:`));
  };
}
