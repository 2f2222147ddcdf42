import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startKaiawatch, waitFor, type Child } from "../helpers/child.js";
import { observeFor } from "../helpers/wait-for.js";

const children: Child[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill("SIGKILL");
      await child.exited;
    }
  }
});

const KEI_PER_KAIA = 10n ** 18n;

/** "25,000.5" → kei. */
function kei(kaia: string): bigint {
  const [whole = "0", fraction = ""] = kaia.replace(/,/g, "").split(".");
  return BigInt(whole) * KEI_PER_KAIA + BigInt((fraction + "0".repeat(18)).slice(0, 18));
}

interface Shown {
  rule: string;
  header: string;
  summary: string;
}

/** The console sink's alerts: "[kaiawatch] RULE · watch · source · network · block N" then the summary line. */
function consoleAlerts(out: string): Shown[] {
  const lines = out.split("\n");
  const shown: Shown[] = [];
  lines.forEach((line, i) => {
    const m = /^\[kaiawatch\] ([a-z0-9_-]+) · /.exec(line);
    if (m) shown.push({ rule: m[1]!, header: line, summary: (lines[i + 1] ?? "").trim() });
  });
  return shown;
}

const RULES = ["large-outflow", "failed-call", "nft-feed", "token-whale"];

function allKindsShown(out: string): boolean {
  const rules = new Set(consoleAlerts(out).map((a) => a.rule));
  return RULES.every((r) => rules.has(r)) && /^\[webhook\] /m.test(out) && /^\[email\] /m.test(out);
}

/** The README's sample output (ports aside), which the demo must print line for line. */
const anyPort = (text: string) => text.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT");
const README_SAMPLE = /<!-- demo-output -->\n```\n([\s\S]*?)\n```/.exec(readFileSync(new URL("../../README.md", import.meta.url), "utf8"))?.[1];
const unprintedSampleLines = (out: string): string[] => {
  const printed = new Set(anyPort(out).split("\n"));
  return anyPort(README_SAMPLE ?? "").split("\n").filter((line) => !printed.has(line));
};

describe("kaiawatch demo", () => {
  it("shows an alert of each kind, the webhooks and mails they produce, and stops cleanly on Ctrl-C", async () => {
    const child = startKaiawatch(["demo"]);
    children.push(child);
    const started = Date.now();
    // The demo promises alerts "within seconds": the generous bound is for two busy cores. The
    // README's sample is an alert of block 20 of the demo chain: waited for, not assumed
    // printed after ten seconds (a busy machine made the chain reach it later).
    await waitFor(() => (allKindsShown(child.stdout()) && unprintedSampleLines(child.stdout()).length === 0) || child.process.exitCode !== null, 45_000, "an alert of each kind, a webhook, a mail and the README's sample");
    // Keep it running for ten seconds in all: it must stay up, not just print a first burst.
    await observeFor(Math.max(0, 10_000 - (Date.now() - started)));
    expect(child.process.exitCode, child.stderr()).toBeNull();
    // The status server it points at serves the daemon's metrics.
    const status = /^ {2}status +(http:\/\/127\.0\.0\.1:\d+)\/status/m.exec(child.stdout())?.[1];
    expect(status, child.stdout()).toBeDefined();
    expect((await fetch(`${status}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${status}/metrics`)).text();
    expect(metrics).toMatch(/^kaiawatch_rule_matches_total\{rule="large-outflow"\} [1-9]/m);
    child.process.kill("SIGINT");
    const exit = await child.exited;
    const out = child.stdout();
    expect(exit, `stderr:\n${child.stderr()}\nstdout:\n${out}`).toEqual({ code: 0, signal: null });

    // Where things are.
    const simulator = /^ {2}simulator +(http:\/\/127\.0\.0\.1:\d+)/m.exec(out)?.[1];
    const store = /^ {2}store +(\S+)/m.exec(out)?.[1];
    expect(simulator).toBeDefined();
    expect(/^ {2}webhook +http:\/\/127\.0\.0\.1:\d+\//m.test(out)).toBe(true);
    expect(/^ {2}mail catcher +smtp:\/\/127\.0\.0\.1:\d+/m.test(out)).toBe(true);

    const alerts = consoleAlerts(out);
    const of = (rule: string) => alerts.filter((a) => a.rule === rule);
    for (const rule of RULES) expect(of(rule).length, `alerts of ${rule} in:\n${out}`).toBeGreaterThan(0);
    for (const a of alerts) expect(a.header).toMatch(/ · demo · block \d+$/);

    // Each alert shows what its rule is about.
    for (const a of of("large-outflow")) {
      const amount = /^([\d,]+(?:\.\d+)?) KAIA left the treasury/.exec(a.summary)?.[1];
      expect(amount, a.summary).toBeDefined();
      expect(kei(amount!) >= 1000n * KEI_PER_KAIA, a.summary).toBe(true);
    }
    for (const a of of("failed-call")) expect(a.summary).toMatch(/\(Fail: /);
    for (const a of of("nft-feed")) expect(a.summary).toMatch(/^NFT #\d+ of 0x/);
    for (const a of of("token-whale")) {
      const value = /value (\d+)/.exec(a.summary)?.[1];
      expect(value, a.summary).toBeDefined();
      expect(BigInt(value!) > 1_000_000n * KEI_PER_KAIA, a.summary).toBe(true);
    }

    // The webhook receiver checked every signature; the mail catcher got the email sink's mails.
    const webhooks = [...out.matchAll(/^\[webhook\] ([a-z0-9_-]+) · (\S+) · (.+)$/gm)];
    expect(webhooks.length).toBeGreaterThan(0);
    for (const [, rule, , check] of webhooks) {
      expect(["large-outflow", "failed-call", "token-whale"]).toContain(rule);
      expect(check).toBe("signature ok");
    }
    const mails = [...out.matchAll(/^\[email\] to treasury-team@demo\.invalid · (<[^>]+>)\n {2}Subject: \[kaiawatch\] ([a-z0-9_-]+): (.+)$/gm)];
    expect(mails.length).toBeGreaterThan(0);
    for (const [, , rule] of mails) expect(["large-outflow", "failed-call"]).toContain(rule);

    // The README's sample output is what the demo prints (ports aside), line for line.
    expect(README_SAMPLE, "README.md has the demo-output block").toBeDefined();
    for (const line of unprintedSampleLines(out)) expect.fail(`README line not printed by the demo: ${line}`);

    expect(out).toMatch(/kaiawatch demo: stopped\. \d+ alerts shown, \d+ webhooks and \d+ mails received\.\n$/);
    expect(existsSync(store!), "the temporary store is removed").toBe(false);
  }, 90_000);

  it("refuses a malformed option with a usage message and exit 2", async () => {
    const child = startKaiawatch(["demo", "--seed", "many"]);
    children.push(child);
    expect(await child.exited).toEqual({ code: 2, signal: null });
    expect(child.stderr()).toContain('--seed must be an integer, not "many"');
    expect(child.stdout()).toBe("");
  });
});
