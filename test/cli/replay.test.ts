import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { createServer, type Server } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { openStore } from "../../src/store/open-store.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { readOnDisk, type OnDisk } from "../store/fixtures/on-disk.js";
import { kaiaToKei } from "../../src/chain/units.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RANGE = 300;

interface Setup {
  sim: Simulator;
  dir: string;
  from: number;
  to: number;
  store: string;
  alerts: string;
}

async function setup(): Promise<Setup> {
  const sim = await createSimulator({ seed: 7, initialBlocks: RANGE });
  const dir = tempDir();
  cleanups.push(async () => {
    await sim.close();
    dir.remove();
  });
  const to = sim.head();
  return { sim, dir: dir.path, from: to - RANGE + 1, to, store: join(dir.path, "store.json"), alerts: join(dir.path, "alerts.jsonl") };
}

/** A config whose rule `big-calls` matches some of the wallet's internal transactions, in small windows and pages. */
function configText(s: Setup, options: { notify?: string; sinks?: string; explorer?: string; watch?: string } = {}): string {
  return `
explorer:
  base_url: ${s.sim.url}
  requests_per_second: 1000
  page_size: 50
${options.explorer ?? ""}
chain:
  rpc_url: ${s.sim.rpcUrl}
  lag_blocks: 0
store: { path: ${s.store} }
status: { listen: false }
defaults: { start: ${s.from}, max_window_blocks: 40, jitter: 0s }
watches:
  - ${options.watch ?? `{ name: wallet, account: "${s.sim.addresses.busyWallet}", sources: [internal_transactions], via: own }`}
rules:
  - name: big-calls
    watch: wallet
    when: { amount: { gte: "1000 KAIA" } }
    notify: [${options.notify ?? "out"}]
sinks:
  out: { type: file, path: ${s.alerts} }
${options.sinks ?? ""}
`;
}

function writeConfig(s: Setup, text: string, name = "config.yaml"): string {
  const path = join(s.dir, name);
  writeFileSync(path, text);
  return path;
}

function matchLines(stdout: string): Array<{ type: string; alert: AlertDocument; rendered: Record<string, string> }> {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; alert: AlertDocument; rendered: Record<string, string> })
    .filter((line) => line.type === "match");
}

function snapshot(path: string): Pick<OnDisk, "cursors" | "outbox"> {
  const data = readOnDisk(path);
  return { cursors: data.cursors, outbox: data.outbox };
}

function bigCallsTruth(s: Setup): number {
  const threshold = kaiaToKei("1000");
  // Value that moved: a call with an error, or in a failed transaction, moved none (issue 41).
  const moved = (r: { error?: string; transaction_status?: { status: string } }) => !r.error && r.transaction_status?.status !== "Fail";
  return s.sim.truth.accountInternalTransactions(s.sim.addresses.busyWallet, { from: s.from, to: s.to }).filter((r) => moved(r) && kaiaToKei(String(r.amount)) >= threshold).length;
}

/** A loopback HTTP receiver and an SMTP-port listener that only count what reaches them. */
async function receivers(): Promise<{ http: () => number; smtp: () => number; httpUrl: string; smtpPort: number }> {
  let httpHits = 0;
  let smtpHits = 0;
  const http: Server = createServer((req, res) => {
    httpHits += 1;
    res.end("ok");
  });
  const smtp: TcpServer = createTcpServer((socket) => {
    smtpHits += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => http.close(() => resolve())));
  cleanups.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  const httpPort = (http.address() as { port: number }).port;
  return { http: () => httpHits, smtp: () => smtpHits, httpUrl: `http://127.0.0.1:${httpPort}`, smtpPort: (smtp.address() as { port: number }).port };
}

describe("kaiawatch replay", () => {
  it("finds exactly the alerts the daemon delivers over the same range", async () => {
    const s = await setup();
    const configPath = writeConfig(s, configText(s));
    const daemon = await createDaemon(quietCommon(), { config: configFromText(configText(s)) });
    const { scan, delivery } = await daemon.runOnce();
    await daemon.stop();
    expect(scan.results.every((r) => r.error === undefined)).toBe(true);
    expect(scan.head).toBe(s.to);
    expect(delivery.pending).toBe(0);
    const delivered = readJsonLines(s.alerts).map((alert) => alert.id);

    const result = await runCli("replay", "--config", configPath, "--rule", "big-calls", "--from", String(s.from), "--to", String(s.to), "--json");
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const replayed = matchLines(result.out).map((line) => line.alert.id);

    const expected = bigCallsTruth(s);
    expect(expected).toBeGreaterThan(0);
    expect(delivered.length).toBe(expected);
    expect(replayed.length).toBe(delivered.length);
    expect(new Set(replayed)).toEqual(new Set(delivered));
    const summary = JSON.parse(result.out.trim().split("\n").at(-1)!) as Record<string, number>;
    expect(summary.matches).toBe(expected);
    expect(summary.records).toBe(s.sim.truth.accountInternalTransactions(s.sim.addresses.busyWallet, { from: s.from, to: s.to }).length);
  });

  it("renders the same alert documents as the daemon, enrichment included", async () => {
    const s = await setup();
    const from = s.to - 29;
    const text = configText(s).replace(`start: ${s.from}`, `start: ${from}`).replace("    notify: [out]", "    notify: [out]\n    enrich: [tx_internal]");
    const daemon = await createDaemon(quietCommon(), { config: configFromText(text) });
    await daemon.runOnce();
    await daemon.stop();
    const withoutTime = ({ created_at: _created, ...rest }: AlertDocument) => rest;
    const delivered = readJsonLines(s.alerts).map(withoutTime);
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.every((alert) => alert.enrichment?.tx_internal !== undefined)).toBe(true);

    const result = await runCli("replay", "--config", writeConfig(s, text), "--rule", "big-calls", "--from", String(from), "--to", String(s.to), "--json");
    expect(result.code).toBe(0);
    const replayed = matchLines(result.out).map((line) => withoutTime(line.alert));
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(replayed.sort(byId)).toEqual(delivered.sort(byId));
  });

  it("without --send sends nothing and leaves every cursor and the outbox as they were, and renders each sink's message", async () => {
    const s = await setup();
    // The daemon has run over the range: a cursor and delivered alerts exist.
    const daemon = await createDaemon(quietCommon(), { config: configFromText(configText(s)) });
    await daemon.runOnce();
    await daemon.stop();
    const before = snapshot(s.store);
    expect(Object.keys(before.cursors).length).toBe(1);
    expect(before.outbox.length).toBeGreaterThan(0);
    const alertsBefore = readFileSync(s.alerts, "utf8");

    const r = await receivers();
    const configPath = writeConfig(
      s,
      configText(s, {
        notify: "out, chat, mail, hook",
        sinks: [
          `  chat: { type: slack, url: "${r.httpUrl}/slack" }`,
          `  mail: { type: email, smtp: { host: 127.0.0.1, port: ${r.smtpPort} }, from: "kaiawatch <alerts@example.com>", to: [ops@example.com] }`,
          `  hook: { type: webhook, url: "${r.httpUrl}/hook", allow_http: true }`,
        ].join("\n"),
      }),
      "replay.yaml",
    );
    s.sim.resetStats();
    const result = await runCli("replay", "--config", configPath, "--rule", "big-calls", "--from", String(s.from), "--to", String(s.to));
    expect(result.err).toBe("");
    expect(result.code).toBe(0);

    expect(snapshot(s.store)).toEqual(before);
    expect(readFileSync(s.alerts, "utf8")).toBe(alertsBefore);
    expect(r.http()).toBe(0);
    expect(r.smtp()).toBe(0);

    const expected = bigCallsTruth(s);
    const out = result.out;
    expect(out.match(/^── match /gm)?.length).toBe(expected);
    expect(out.match(/^┌ chat \(slack\)$/gm)?.length).toBe(expected);
    expect(out.match(/^│ text: big-calls: /gm)?.length).toBe(expected);
    expect(out.match(/^│ Subject: \[kaiawatch\] big-calls: /gm)?.length).toBe(expected);
    expect(out.match(/^│ {3}"id": "kw_[0-9a-f]{32}",$/gm)?.length).toBe(expected);
    // The summary's credits are what the explorer charged (the simulator counts them independently).
    const credits = s.sim.stats().creditsTotal;
    expect(credits).toBeGreaterThan(0);
    expect(out).toContain(`${expected} matches; ${credits} credits spent.`);
    expect(out).toContain("Nothing was sent and no cursor moved");
  });

  it("with --send queues the matches without moving a cursor and delivers them once", async () => {
    const s = await setup();
    const configPath = writeConfig(s, configText(s));
    const args = ["replay", "--config", configPath, "--rule", "big-calls", "--from", String(s.from), "--to", String(s.to), "--send"];
    const first = await runCli(...args);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    const expected = bigCallsTruth(s);
    const delivered = readJsonLines(s.alerts);
    expect(delivered.length).toBe(expected);
    expect(first.out).toContain(`Queued ${expected} of ${expected} alerts`);

    const second = await runCli(...args);
    expect(second.code).toBe(0);
    expect(second.out).toContain(`Queued 0 of ${expected} alerts (${expected} were already in the outbox)`);
    expect(readJsonLines(s.alerts).length).toBe(expected);

    const store = await openStore(quietCommon(), { path: s.store, readOnly: true });
    expect((await store.listCursors())).toEqual([]);
    expect((await store.listOutbox()).every((entry) => entry.state === "delivered")).toBe(true);
    await store.close();
  });

  it("asks for --yes when the estimate is over the daily budget, or over 1,000 credits without one, before fetching anything", async () => {
    const s = await setup();
    // Operation 7 costs 20 credits a call: 8 windows of 40 blocks are at least 160 credits.
    const budgeted = writeConfig(s, configText(s, { explorer: "  daily_credit_budget: 100" }), "budget.yaml");
    s.sim.resetStats();
    const refused = await runCli("replay", "--config", budgeted, "--rule", "big-calls", "--from", String(s.from), "--to", String(s.to));
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("at least 160 credits");
    expect(refused.err).toContain("100 credits left today");
    expect(refused.err).toContain("--yes");
    expect(s.sim.stats().creditsTotal).toBe(0);

    // No budget: 300 windows of one block at 20 credits are 6,000 credits, over the threshold.
    const unbudgeted = writeConfig(s, configText(s).replace("max_window_blocks: 40", "max_window_blocks: 1"), "small-windows.yaml");
    const refusedToo = await runCli("replay", "--config", unbudgeted, "--rule", "big-calls", "--from", String(s.from), "--to", String(s.to));
    expect(refusedToo.code).toBe(2);
    expect(refusedToo.err).toContain("1000-credit threshold");
    expect(s.sim.stats().creditsTotal).toBe(0);

    const shorter = await runCli("replay", "--config", unbudgeted, "--rule", "big-calls", "--from", String(s.to - 9), "--to", String(s.to));
    expect(shorter.code).toBe(0);
    const yes = await runCli("replay", "--config", unbudgeted, "--rule", "big-calls", "--from", String(s.to - 59), "--to", String(s.to), "--yes");
    expect(yes.code).toBe(0);
    expect(s.sim.stats().creditsTotal).toBe(10 * 20 + 60 * 20);
  });

  it("takes --from -N (the last N blocks, as the README writes it) and reads to the head without --to", async () => {
    const s = await setup();
    const configPath = writeConfig(s, configText(s));
    const span = `over blocks ${s.to - 99}–${s.to} (100 blocks)`;
    for (const from of [["--from", "-100"], ["--from=-100"]]) {
      const result = await runCli("replay", "--config", configPath, "--rule", "big-calls", ...from);
      expect(result.err, from.join(" ")).toBe("");
      expect(result.code).toBe(0);
      expect(result.out).toContain(span);
    }
    const absolute = await runCli("replay", "--config", configPath, "--rule", "big-calls", "--from", String(s.to - 9));
    expect(absolute.out).toContain(`over blocks ${s.to - 9}–${s.to} (10 blocks)`);
    for (const bad of [["--from", "-0"], ["--from", "5", "--to", "-1"]]) {
      const refused = await runCli("replay", "--config", configPath, "--rule", "big-calls", ...bad);
      expect(refused.code, bad.join(" ")).toBe(2);
      expect(refused.err).toMatch(/must be a block number/);
    }
    const help = await runCli("replay", "--help");
    expect(help.out).toContain("--from BLOCK|-N");
    expect(help.out).toMatch(/--to BLOCK +last block, at most that head \(default: that head/);
  });

  it("refuses a range past the indexed head and an unknown rule, with a usage error", async () => {
    const s = await setup();
    const configPath = writeConfig(s, configText(s));
    const past = await runCli("replay", "--config", configPath, "--rule", "big-calls", "--from", String(s.to - 5), "--to", String(s.to + 5));
    expect(past.code).toBe(2);
    expect(past.err).toContain(`past the head the explorer has indexed (${s.to}`);
    const typo = await runCli("replay", "--config", configPath, "--rule", "big-call", "--from", String(s.from), "--to", String(s.to));
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('did you mean "big-calls"');
  });
});
