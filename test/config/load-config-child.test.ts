import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfigText, type ConfigCheck, type ConfigError } from "../../src/config/index.js";
import type * as ConfigModule from "../../src/config/index.js";
import type * as ParseInChild from "../../src/config/parse-in-child.js";
import { REPLY_PART_ITEMS, shareEqualValues } from "../../src/config/parse-in-child.js";
import { configErrorOf } from "./helpers.js";

// The child runs compiled JavaScript: these tests load the config module from dist/ (built by
// the test setup), as `kaiawatch` does, and compare it with the source parsing in this process.
const dist = (await import(new URL("../../dist/config/index.js", import.meta.url).href)) as typeof ConfigModule;
const distChild = (await import(new URL("../../dist/config/parse-in-child.js", import.meta.url).href)) as typeof ParseInChild;

const hex = (n: number) => n.toString(16).padStart(40, "0");
/** Past one part of the child's reply (REPLY_PART_ITEMS), so that the watches and rules cross in two, in order. */
const WATCHES = REPLY_PART_ITEMS + 10;

/**
 * A config of 260 watches and rules, above the 256 KiB from which a child process parses: a
 * comment block at the end brings it there. 2,000 watches did the same at ten times the
 * parse cost, each test parsing it twice (here and in the child), a minute of the suite.
 */
function largeConfig(): string {
  const lines = ["sinks:", "  hook:", "    type: webhook", "    url: https://hooks.example/${HOOK_TOKEN}", "    secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "watches:"];
  for (let i = 0; i < WATCHES; i++) lines.push(`  - name: w${i}`, `    account: "0x${hex(i + 1)}"`, "    sources: [nft_transfers, internal_transactions]", "    start: -100");
  lines.push("rules:");
  for (let i = 0; i < WATCHES; i++) lines.push(`  - name: r${i}`, `    watch: w${i}`, "    source: internal_transactions", `    when: { amount: { gte: "${i} KAIA" } }`, "    notify: [hook]");
  for (let i = 0; i < 3_000; i++) lines.push(`# ${"notes on the watches above ".repeat(3)}${i}`);
  return `${lines.join("\n")}\n`;
}

describe("a large config is parsed in a process of its own", () => {
  const dir = mkdtempSync(join(tmpdir(), "kaiawatch-config-worker-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const text = largeConfig();
  const path = join(dir, "large.yaml");
  writeFileSync(path, text);
  const env = { HOOK_TOKEN: "t0k3n" };

  it("gives the same config and secrets as parsing here, with ${VAR} from the env it is given, its watches and rules in parts", async () => {
    expect(text.length).toBeGreaterThan(256 * 1024);
    const loaded = await dist.loadConfig({ path, env });
    const here = parseConfigText(text, { fileName: path, env });
    expect(loaded.config.watches).toHaveLength(WATCHES);
    expect(loaded.config).toEqual(here.config);
    expect(loaded.secrets).toEqual(here.secrets);
    expect(loaded.secrets).toContain("https://hooks.example/t0k3n");
  });

  it("reports a schema error deep in the file at its line, exactly as parsing here does", async () => {
    const bad = text.replace("    account: \"0x" + hex(151), "    account: \"0x" + hex(151).slice(1));
    const badPath = join(dir, "bad.yaml");
    writeFileSync(badPath, bad);
    const error = (await dist.loadConfig({ path: badPath, env }).catch((rejected: unknown) => rejected)) as ConfigError;
    expect(error.code).toBe("KW_CONFIG_INVALID");
    const expected = configErrorOf(() => parseConfigText(bad, { fileName: badPath, env }));
    expect(error.format()).toBe(expected.format());
    expect(error.format()).toMatch(new RegExp(`^${badPath}:${1 + 6 + 150 * 4 + 1}:\\d+ watches\\[150\\]\\.account: `));
  });

  it("runs the caller's checks here and still gives their problems a line", async () => {
    const check: ConfigCheck = (config) => (config.watches.length > 100 ? [{ path: ["rules", 123, "notify"], message: "no such sink on this host" }] : []);
    const error = (await dist.loadConfig({ path, env, checks: [check] }).catch((rejected: unknown) => rejected)) as ConfigError;
    expect(error.code).toBe("KW_CONFIG_INVALID");
    const line = text.split("\n").indexOf("  - name: r123") + 1 + 4;
    expect(error.format()).toBe(`${path}:${line}:13 rules[123].notify: no such sink on this host`);
  });

  it("fails with a clear error, not a hang, when the child exits without an answer", async () => {
    // The child runs this code instead of its script, as a child killed or crashed before it answers.
    const error = (await distChild.parseConfigInChild({ text, fileName: path, env }, ["--eval", "process.exit(3)"]).catch((rejected: unknown) => rejected)) as Error;
    expect(error.message).toBe("the config parser's process exited (code 3) without an answer");
  });

  it("says a missing variable is missing, from the child too", async () => {
    const error = (await dist.loadConfig({ path, env: {} }).catch((rejected: unknown) => rejected)) as ConfigError;
    expect(error.format()).toMatch(/^.*:4:\d+ sinks\.hook\.url: .*HOOK_TOKEN/);
  });
});

describe("the child's reply with its repeated strings and small parts shared", () => {
  it("is the same value, changed in place: nested lists and maps, long texts and other values as they were", () => {
    const long = "x".repeat(500);
    const value = { a: ["out", "out", { b: "out", c: [long, long, 3, null, true] }], d: { e: "out", f: undefined, g: [[["node"]]] }, h: "node", i: new Date(0) };
    const before = structuredClone(value);
    expect(shareEqualValues(value)).toBe(value);
    expect(value).toEqual(before);
  });

  it("makes equal small arrays and plain objects one, and leaves large or other ones apart", () => {
    const rule = (name: string) => ({ name, when: { "args.value": { gte: "1000" } }, notify: ["out"], enrich: [], labels: {} });
    const big = () => ({ list: Array.from({ length: 50 }, (_, i) => `0x${i}`) });
    const value = shareEqualValues({ rules: [rule("a"), rule("b")], big: [big(), big()], dates: [{ at: new Date(0) }, { at: new Date(0) }], numbers: [{ n: null }, { n: Number.NaN }, { n: undefined }, {}] });
    const [a, b] = value.rules;
    expect(a).not.toBe(b);
    expect(a?.when).toBe(b?.when);
    expect(a?.notify).toBe(b?.notify);
    expect(a?.enrich).toBe(b?.enrich);
    expect(a?.labels).toBe(b?.labels);
    expect(value.big[0]).not.toBe(value.big[1]);
    expect(value.dates[0]).not.toBe(value.dates[1]);
    expect(value.rules).toEqual([rule("a"), rule("b")]);
    // JSON would write NaN as null, and drop an undefined key.
    expect(value.numbers.map((n) => n.n)).toEqual([null, Number.NaN, undefined, undefined]);
    expect(new Set(value.numbers).size).toBe(4);
  });
});
