import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createTestCommon } from "../../src/common/common.js";
import { createDispatcher } from "../../src/notify/dispatcher.js";
import { openStore } from "../../src/store/open-store.js";
import { commit, entry, permanent, recording, TestSink, transient } from "../notify/dispatcher-fixtures.js";

let dir: string;
let storePath: string;
let configPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "kaiawatch-outbox-cli-"));
  storePath = join(dir, "data", "store.json");
  configPath = join(dir, "config.yaml");
  await writeFile(
    configPath,
    [
      "explorer:",
      "  api_key: ${KAIASCAN_API_KEY}",
      "store:",
      `  path: ${JSON.stringify(storePath)}`,
      "watches:",
      "  - name: hot",
      '    account: "0x1111111111111111111111111111111111111111"',
      "",
    ].join("\n"),
  );
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk));
  stderr.on("data", (chunk: Buffer) => err.push(chunk));
  const code = await main(argv, { stdout, stderr, env: { KAIASCAN_API_KEY: "key-for-tests-123" }, signal: new AbortController().signal });
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}

/** A store as the daemon leaves it: delivered, retrying, dead (permanent and max attempts) entries. */
async function seedStore(): Promise<void> {
  const common = createTestCommon();
  const store = await openStore(common, { path: storePath });
  await commit(store, [entry("ok1", "slack", "big-outflow"), entry("bad1", "mail", "big-outflow"), entry("slow1", "hook", "failed-calls"), entry("gone1", "slack2", "failed-calls")]);
  const slack = recording("slack");
  const mail = new TestSink("mail", () => {
    throw permanent("550 mailbox \u001b[31munavailable\u202e");
  });
  const hook = new TestSink("hook", () => {
    throw transient("receiver answered 503");
  });
  const slack2 = new TestSink("slack2", () => {
    throw transient("timeout");
  });
  const d = createDispatcher(common, {
    store,
    rules: [],
    sinks: [
      { sink: slack, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 },
      { sink: mail, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 },
      { sink: hook, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 },
      { sink: slack2, concurrency: 1, maxAttempts: 1, maxAgeMs: 3600_000 },
    ],
    // At its ceiling (random() = 1) the backoff is an hour, so nothing is retried while seeding.
    backoff: { baseMs: 3600_000, maxMs: 3600_000 },
    random: () => 1,
  });
  await d.drain({ timeoutMs: 1000 });
  await store.close();
}

describe("kaiawatch outbox", () => {
  it("lists pending and dead entries by default, with attempts and reasons, from the config's store", async () => {
    await seedStore();
    const { code, stdout, stderr } = await run("outbox", "--config", configPath);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+SINK\s+RULE\s+STATE\s+ATTEMPTS\s+CREATED\s+SUMMARY\s+LAST ERROR \/ REASON$/);
    expect(stdout).not.toContain("ok1:slack");
    const row = (id: string) => lines.find((line) => line.startsWith(`${id} `)) ?? "";
    expect(row("bad1:mail")).toMatch(/mail\s+big-outflow\s+dead\s+1\s+\S+Z\s+.+\s+permanent error: KW_NOTIFY_HTTP: 550 mailbox \\u001b\[31munavailable\\u202e$/);
    expect(row("slow1:hook")).toMatch(/hook\s+failed-calls\s+pending\s+1\s+.*receiver answered 503 \(next attempt \S+\)$/);
    expect(row("gone1:slack2")).toMatch(/dead\s+1\s+.*gave up after 1 attempts: KW_NOTIFY_HTTP: timeout$/);
    expect(row("bad1:mail")).toContain(" alert bad1 ");
    expect(lines.at(-1)).toBe("1 pending, 2 dead");
  });

  it("says which digest a pending alert of a grouped rule waits for", async () => {
    const store = await openStore(createTestCommon(), { path: storePath });
    await commit(store, [entry("g1", "hook", "failed-calls", { record: { transaction_hash: "0xABC" } })]);
    await store.close();
    const grouped = join(dir, "grouped.yaml");
    await writeFile(
      grouped,
      `store: { path: ${JSON.stringify(storePath)} }
watches: [{ name: hot, account: "0x1111111111111111111111111111111111111111" }]
rules: [{ name: failed-calls, watch: hot, notify: [hook], group: { window: 1m, by: transaction } }]
sinks: { hook: { type: console } }
`,
    );
    const { code, stdout } = await run("outbox", "--config", grouped);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^g1:hook\s+hook\s+failed-calls\s+pending\s+0\s+\S+Z\s+alert g1\s+waiting for the next digest of rule failed-calls \(group.window 1m, transaction 0x\S+\)$/m);
  });

  it("filters by state and sink, and prints JSON lines", async () => {
    await seedStore();
    const delivered = await run("outbox", "--store", storePath, "--state", "delivered");
    expect(delivered.code).toBe(0);
    expect(delivered.stdout).toMatch(/ok1:slack\s+slack\s+big-outflow\s+delivered\s+1\s/);
    expect(delivered.stdout).not.toContain("bad1:mail");

    const mail = await run("outbox", "--config", configPath, "--sink", "mail", "--json");
    expect(mail.code).toBe(0);
    const objects = mail.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(objects).toHaveLength(1);
    expect(objects[0]).toMatchObject({ id: "bad1:mail", alert_id: "bad1", state: "dead", attempts: 1, sink: "mail" });

    const none = await run("outbox", "--store", storePath, "--sink", "nobody");
    expect(none).toMatchObject({ code: 0, stdout: "No pending or dead alerts for sink nobody in the outbox.\n" });
  });

  it("shows the newest --limit entries of each state, oldest first, with the totals", async () => {
    const store = await openStore(createTestCommon(), { path: storePath });
    await commit(store, Array.from({ length: 250 }, (_, i) => entry(`p${String(i).padStart(3, "0")}`, "hook", "big-outflow")));
    await store.close();
    const shown = await run("outbox", "--store", storePath, "--limit", "3");
    expect(shown.code).toBe(0);
    const ids = shown.stdout
      .trim()
      .split("\n")
      .slice(1, 4)
      .map((line) => line.split(/\s+/)[0]);
    expect(ids).toEqual(["p247:hook", "p248:hook", "p249:hook"]);
    expect(shown.stdout).toContain("250 pending (the newest 3 of each shown; --limit N shows more)");
    // By default the newest 100.
    const byDefault = await run("outbox", "--store", storePath, "--json");
    expect(byDefault.stdout.trim().split("\n")).toHaveLength(100);
    const bad = await run("outbox", "--store", storePath, "--limit", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit must be a whole number ≥ 1");
  });

  it("works while the daemon holds the store (read-only)", async () => {
    await seedStore();
    const daemon = await openStore(createTestCommon(), { path: storePath });
    try {
      const { code, stdout } = await run("outbox", "--config", configPath, "--state", "dead");
      expect(code).toBe(0);
      expect(stdout).toContain("bad1:mail");
    } finally {
      await daemon.close();
    }
  });

  it("retry requeues the named dead letters (entry or alert id) and --all the rest", async () => {
    await seedStore();
    const one = await run("outbox", "retry", "bad1", "--config", configPath);
    expect(one).toMatchObject({ code: 0, stderr: "" });
    expect(one.stdout).toContain("Requeued 1 dead letter;");

    let store = await openStore(createTestCommon(), { path: storePath, readOnly: true });
    expect((await store.listOutbox({ state: "dead" })).map((e) => e.id)).toEqual(["gone1:slack2"]);
    expect((await store.listOutbox({ state: "pending" })).find((e) => e.id === "bad1:mail")).toMatchObject({ attempts: 0 });
    await store.close();

    const missing = await run("outbox", "retry", "nope", "--store", storePath);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no dead letter matches "nope"');

    const all = await run("outbox", "--store", storePath, "retry", "--all");
    expect(all).toMatchObject({ code: 0 });
    expect(all.stdout).toContain("Requeued 1 dead letter;");
    store = await openStore(createTestCommon(), { path: storePath, readOnly: true });
    expect((await store.listOutbox({ state: "dead" }))).toEqual([]);
    await store.close();

    // The requeued letters are delivered by the next run, under their alert ids.
    const common = createTestCommon();
    const writable = await openStore(common, { path: storePath });
    const mail = recording("mail");
    const slack2 = recording("slack2");
    const d = createDispatcher(common, { store: writable, rules: [], sinks: [{ sink: mail, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }, { sink: slack2, concurrency: 1, maxAttempts: 3, maxAgeMs: 3600_000 }] });
    await d.drain();
    await writable.close();
    expect([...mail.delivered, ...slack2.delivered].sort()).toEqual(["bad1", "gone1"]);
  });

  it("retry refuses while the daemon holds the store, saying what to do", async () => {
    await seedStore();
    const daemon = await openStore(createTestCommon(), { path: storePath });
    try {
      const { code, stderr } = await run("outbox", "retry", "--all", "--config", configPath);
      expect(code).toBe(1);
      // The daemon runs in this test's process: the kernel lock is per process, so the store says so.
      expect(stderr).toContain("is already open in this process; stop it first");
      // No daemon ever started here, so there is no write token to ask it with.
      expect(stderr).toContain("The daemon cannot be asked instead: KW_STATUS_TOKEN_FILE: there is no write token");
      expect(await daemon.listOutbox({ state: "dead" })).toHaveLength(2);
    } finally {
      await daemon.close();
    }
  });

  it("reports usage and config mistakes with exit code 2 and no stack trace", async () => {
    const badState = await run("outbox", "--store", storePath, "--state", "stuck");
    expect(badState).toMatchObject({ code: 2 });
    expect(badState.stderr).toContain("--state must be one of pending, dead, delivered, suppressed");

    const noIds = await run("outbox", "retry", "--store", storePath);
    expect(noIds.code).toBe(2);
    expect(noIds.stderr).toContain("retry needs dead letter ids, or --all");

    const unknown = await run("outbox", "--frobnicate");
    expect(unknown.code).toBe(2);

    const missingConfig = await run("outbox", "--config", join(dir, "nope.yaml"));
    expect(missingConfig.code).toBe(2);
    expect(missingConfig.stderr).toContain("config file not found");
    expect(missingConfig.stderr).not.toMatch(/\n\s+at /);

    const noStore = await run("outbox", "--config", configPath);
    expect(noStore.code).toBe(0);
    expect(noStore.stdout).toContain("the outbox is empty");
  });

  it("shows help", async () => {
    const { code, stdout } = await run("outbox", "--help");
    expect(code).toBe(0);
    expect(stdout).toContain("kaiawatch outbox retry (ID… | --all)");
  });
});
