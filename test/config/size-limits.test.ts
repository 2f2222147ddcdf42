import { closeSync, openSync, ftruncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { ConfigFileError, loadConfig, parseConfigText } from "../../src/config/index.js";
import { MAX_CONFIG_BYTES } from "../../src/config/load-config.js";
import { MAX_CONFIG_DEPTH, SCAN_DEPTH_LIMIT } from "../../src/config/document-depth.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { configErrorOf } from "./helpers.js";

/*
 * A 44 MB config crashed the loader with "Maximum call stack size exceeded" (exit 1).
 * Files over the size limit are refused before they are read; nesting past the depth
 * limit is refused by name, however deep, before any recursive walk.
 */
const dir = tempDir("kaiawatch-config-limits-");
afterAll(() => dir.remove());

/** A sparse file of `bytes`: the size is what is checked, so nothing need be written. */
function sparseFile(name: string, bytes: number): string {
  const path = join(dir.path, name);
  const fd = openSync(path, "w");
  ftruncateSync(fd, bytes);
  closeSync(fd);
  return path;
}

describe("config size", () => {
  it("is 8 MiB", () => expect(MAX_CONFIG_BYTES).toBe(8 * 1024 * 1024));

  it("a file over the limit is refused before parsing, with its own code", async () => {
    const path = sparseFile("huge.yaml", 44 * 1000 * 1000);
    const error = await loadConfig({ path, env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).code).toBe("KW_CONFIG_TOO_LARGE");
    expect((error as ConfigFileError).message).toBe(`config file ${path} is 42.0 MiB; the limit is 8 MiB (many addresses with the same rules fit in one accounts: or contracts: watch, docs/configuration.md; or split the watches over several kaiawatch instances)`);
  });

  it("kaiawatch validate and run: one line, exit 2, no stack", async () => {
    const path = sparseFile("over.yaml", MAX_CONFIG_BYTES + 1);
    for (const command of ["validate", "run"]) {
      const io = memoryIO();
      expect(await main([command, "--config", path], io)).toBe(2);
      expect(io.err()).toBe(`config file ${path} is 8.0 MiB; the limit is 8 MiB (many addresses with the same rules fit in one accounts: or contracts: watch, docs/configuration.md; or split the watches over several kaiawatch instances)\n`);
    }
  });

  it("a file at the limit is read (and judged on its content)", async () => {
    const path = join(dir.path, "at-limit.yaml");
    const head = "watches:\n  - { name: w, every_block: true }\n";
    writeFileSync(path, head + "#".repeat(MAX_CONFIG_BYTES - head.length));
    const loaded = await loadConfig({ path, env: {} });
    expect(loaded.config.watches).toHaveLength(1);
  });

  it("text given directly is held to the same limit", () => {
    const error = configErrorOf(() => parseConfigText(" ".repeat(MAX_CONFIG_BYTES + 1)));
    expect(error.format()).toContain("the limit is 8 MiB");
  });
});

describe("config nesting", () => {
  const nested = (depth: number) => `watches: ${"[".repeat(depth)}${"]".repeat(depth)}\n`;

  it.each([MAX_CONFIG_DEPTH + 1, 1000, 100_000])("flow lists %i deep: a clear error at a line, not a stack overflow", (depth) => {
    const error = configErrorOf(() => parseConfigText(nested(depth), { fileName: "config.yaml" }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.message).toBe(`nested too deeply: maps and lists may nest at most ${MAX_CONFIG_DEPTH} levels`);
    expect(error.issues[0]?.line).toBe(1);
  });

  it.each([200, 1000])("block maps nested %i deep: the same", (depth) => {
    const text = `watches:\n${Array.from({ length: depth }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} 1\n`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "config.yaml" }));
    expect(error.format()).toContain("nested too deeply");
    expect(error.format()).not.toMatch(/call stack/i);
  });

  it("a list of lists written with dashes, 1000 deep: the same", () => {
    const error = configErrorOf(() => parseConfigText(`watches:\n  ${"- ".repeat(1000)}x\n`, { fileName: "config.yaml" }));
    // Two levels (the root map, `watches`) before the first dash; the one past the scan's limit is named.
    expect(error.format()).toBe(`config.yaml:2:${3 + 2 * (SCAN_DEPTH_LIMIT - 2)} nested too deeply: maps and lists may nest at most ${MAX_CONFIG_DEPTH} levels`);
  });

  it("brackets inside quotes and comments are not nesting", () => {
    const text = `watches:\n  - { name: w, every_block: true } # ${"[".repeat(1000)}\nrules: []\nsinks: { c: { type: file, path: "/tmp/${"{".repeat(1000)}" } }\n`;
    expect(parseConfigText(text, { fileName: "config.yaml" }).config.watches).toHaveLength(1);
  });

  it("nesting up to the limit is judged on its content", () => {
    const error = configErrorOf(() => parseConfigText(nested(MAX_CONFIG_DEPTH - 1), { fileName: "config.yaml" }));
    expect(error.format()).not.toContain("nested too deeply");
  });
});
