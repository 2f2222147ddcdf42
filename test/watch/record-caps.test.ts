import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createExplorerClient } from "../../src/explorer/client.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { compileSafePattern } from "../../src/rules/safe-regexp.js";
import { createSimulator } from "../../src/simulator/index.js";
import { startFixtureServer } from "../explorer/fixture-server.js";
import * as s from "../explorer/samples.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";

/**
 * Issue 29, item 8: text written on chain is cut when its record enters the pipeline (at
 * 16,384 characters, with a mark holding the whole text's length and SHA-256), patterns
 * read all of what is kept, and a record nested absurdly deep fails clearly instead of
 * overflowing the stack somewhere downstream.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const FILLER_THEN_DRAIN = `${"x".repeat(9_000)}drain`;
/** Far past the cap (the probe used 20 MB; the benchmark times that size). */
const HUGE = `drain ${"y".repeat(1_000_000)}`;

describe("what a rule pattern reads", () => {
  it('"x" × 9,000 then "drain" matches /drain/', () => {
    const compiled = compileSafePattern("/drain/");
    if (!compiled.ok) throw new Error(compiled.message);
    expect(compiled.pattern.test(FILLER_THEN_DRAIN)).toBe(true);
  });
});

describe("capRecord", () => {
  it("cuts a long text to 16,384 characters with a mark holding its length and SHA-256; leaves short ones", async () => {
    const { capRecord, CUT_MARK } = await import("../../src/families/cap-record.js");
    const { MAX_RECORD_TEXT } = await import("../../src/model/record-limits.js");
    expect(MAX_RECORD_TEXT).toBe(16_384);
    const record = capRecord({ short: "revert: no", nested: { message: HUGE }, list: ["z".repeat(MAX_RECORD_TEXT)] });
    expect(record.short).toBe("revert: no");
    expect(record.list[0]).toHaveLength(MAX_RECORD_TEXT);
    const cut = record.nested.message;
    expect(cut).toHaveLength(MAX_RECORD_TEXT);
    expect(cut.startsWith("drain yyy")).toBe(true);
    expect(cut.endsWith(`${CUT_MARK} ${HUGE.length} characters, sha256 ${sha256(HUGE)}]`)).toBe(true);
    // Never half a surrogate pair at the cut.
    const emoji = capRecord({ t: "😀".repeat(20_000) }).t;
    expect(emoji.length).toBeLessThanOrEqual(MAX_RECORD_TEXT);
    expect(() => encodeURIComponent(emoji)).not.toThrow();
  });

  it("replaces what nests deeper than 16 levels by a mark", async () => {
    const { capRecord } = await import("../../src/families/cap-record.js");
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const capped = capRecord({ deep }) as Record<string, unknown>;
    let depth = 1;
    let node: unknown = capped.deep;
    while (typeof node === "object" && node !== null) {
      node = (node as { d: unknown }).d;
      depth++;
    }
    expect(depth).toBe(16);
    expect(node).toBe("[cut by kaiawatch: nested deeper than 16 levels]");
  });
});

describe("the explorer's JSON", () => {
  it("an answer holding a record nested 100,000 deep is refused clearly, not passed on to overflow the stack", async () => {
    const server = await startFixtureServer();
    cleanups.push(() => server.close());
    const client = createExplorerClient(quietCommon(), { baseUrl: server.url, requestsPerSecond: 1000, retryBaseMs: 1, retryMaxMs: 5, maxRetries: 0 });
    cleanups.push(() => client.close());
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const record = JSON.stringify({ ...s.internalTransactionListItem, extra: "@" }).replace('"@"', deep);
    server.enqueue({ body: `{"results":[${record}],"paging":{"total_count":1,"current_page":1,"last":true,"total_page":1}}` });
    const answer = client.blockInternalTransactions({ blockNumber: 1 });
    await expect(answer).rejects.toMatchObject({ code: "KW_EXPLORER_BAD_RESPONSE", message: expect.stringContaining("nested deeper than 64 levels") });
  });

  it("marks a page as needing no cut only when no text in it is long and nothing nests deep, so the walk is skipped only then", async () => {
    const { MAX_RECORD_TEXT } = await import("../../src/model/record-limits.js");
    const { pageWithinRecordLimits } = await import("../../src/families/cap-record.js");
    const server = await startFixtureServer();
    cleanups.push(() => server.close());
    const client = createExplorerClient(quietCommon(), { baseUrl: server.url, requestsPerSecond: 1000, retryBaseMs: 1, retryMaxMs: 5, maxRetries: 0 });
    cleanups.push(() => client.close());
    const page = (extra: string) =>
      `{"results":[${JSON.stringify({ ...s.internalTransactionListItem, extra: "@" }).replace('"@"', extra)}],"paging":{"total_count":1,"current_page":1,"last":true,"total_page":1}}`;
    let nested = '"x"';
    for (let i = 0; i < 14; i++) nested = `{"d":${nested}}`;
    const cases: Array<[string, boolean]> = [
      [JSON.stringify("y".repeat(MAX_RECORD_TEXT)), true],
      // Escapes count as written: 16,384 characters read, more written.
      [JSON.stringify(`${"y".repeat(MAX_RECORD_TEXT - 1)}"`), false],
      [JSON.stringify("y".repeat(MAX_RECORD_TEXT + 1)), false],
      [nested, false],
    ];
    for (const [extra, within] of cases) {
      server.enqueue({ body: page(extra) });
      const answer = await client.blockInternalTransactions({ blockNumber: 1 });
      expect(pageWithinRecordLimits(answer.results), extra.slice(0, 30)).toBe(within);
    }
  });
});

describe("through a daemon", () => {
  it("a huge revert text is stored and sent cut, with its hash; text after 9,000 characters of filler is matched", async () => {
    const sim = await createSimulator({ seed: 7, initialBlocks: 10 });
    cleanups.push(() => sim.close());
    const block = sim.addBlock({
      internalTransactions: [FILLER_THEN_DRAIN, HUGE].map((message) => ({
        from: sim.addresses.busyWallet,
        to: sim.addresses.contracts[0],
        amount: "0",
        error: "execution reverted",
        transaction_status: { status: "Fail" as const, fail_message: message },
      })),
    });
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const alertsPath = join(dir.path, "alerts.jsonl");
    const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0, api_plan: PRO_PLUS }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", start: ${block - 1}, jitter: 0s }
watches:
  - { name: wallet, account: "${sim.addresses.busyWallet}", sources: [internal_transactions] }
rules:
  - { name: drain, watch: wallet, when: { fail_message: { matches: "/drain/" } }, notify: [out] }
sinks:
  out: { type: file, path: "${alertsPath}" }
`);
    const daemon = await createDaemon(quietCommon(), { config });
    cleanups.push(() => daemon.stop());
    await daemon.runOnce({ drainTimeoutMs: 10_000 });

    const alerts = readJsonLines<AlertDocument>(alertsPath).filter((a) => a.block === block);
    const messages = alerts.map((a) => (a.record as { transaction_status: { fail_message: string } }).transaction_status.fail_message).sort((a, b) => a.length - b.length);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(FILLER_THEN_DRAIN);
    expect(messages[1]).toHaveLength(16_384);
    expect(messages[1]).toContain(`sha256 ${sha256(HUGE)}`);
    // What was stored and sent is bounded by the cap, not by what the chain wrote.
    for (const line of readJsonLines<unknown>(alertsPath)) expect(JSON.stringify(line).length).toBeLessThan(64 * 1024);
  });
});
