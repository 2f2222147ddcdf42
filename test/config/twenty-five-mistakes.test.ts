import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { configErrorOf } from "./helpers.js";

// The same checks `validate`, `run` and `once` run.
const OPTIONS = { fileName: "config.yaml", env: {}, checks: CONFIG_CHECKS };

/*
 * Guarantee 6, "all errors are reported at once", on the file of twenty mistakes (its own test
 * before) plus five that used to hide behind others: a rule's condition and summary were
 * checked only when the rest of the rule (its sinks, its group, its watch) was valid, and a
 * seven-field cron passed. Every mistake must be in the first report, with its key path, line and column.
 */
const TEXT = `explorer:
  requests_per_secnd: 5          # M1
  timeout: 30                    # M2
chain:
  lagblocks: 2                   # M3
status:
  listen: localhost              # M4
  token: \${STATUS_TOKEN}         # M5
defaults:
  schedule: "*/10 * * * *"       # M6
watches:
  - name: hot-wallet
    account: "0x1234"            # M7
    sources: [nft_transfers, internal_transactions]
  - name: Token                  # M8
    contract: "0x3333333333333333333333333333333333333333"
    events: ["Transfer(address, address, uint)"]   # M9
  - name: both
    collection: "0x2222222222222222222222222222222222222222"
    contract: "0x3333333333333333333333333333333333333333"   # M10
  - name: hot-wallet             # M11
    every_block: true
  - name: blocks
    every_block: true
    sources: [internal_transactions]   # M12
  - name: calls
    every_block: true
    schedule: "*/10 * * * * * 2099"   # M21
rules:
  - name: outflow
    watch: hot-walet             # M13
    notify: [ops-slak]           # M14
  - name: calls-logs
    watch: calls
    source: event_logs           # M15
    notify: [ops-slack]
  - name: outflow                # M16
    watch: calls
    notify: [ops-slack]
    group: { window: soon }      # M17
  - name: leak
    watch: blocks
    notify: [nowhere]            # M22
    when: { amout: { gte: "5 KAIA" } }   # M23
  - name: digest
    watch: calls
    group: { window: 5 }         # M24
    summary: "{{amout}} left"    # M25
    notify: [ops-slack]
sinks:
  ops-slack:
    type: slack
    url: https://hooks.slack.com/services/T000/B000/XXXX
  audit:
    type: webhook
    url: http://example.com/hook # M18
  ops-tg:
    type: telgram                # M19
    chat_id: "1"
  ops-slack:                     # M20
    type: console
`;

const EXPECTED = [
  { marker: "M1", at: "requests_per_secnd", path: "explorer.requests_per_secnd", message: 'unknown key (did you mean "requests_per_second"?)' },
  { marker: "M2", at: "30", path: "explorer.timeout", message: 'a duration needs a unit, e.g. "30ms" or "30s"' },
  { marker: "M3", at: "lagblocks", path: "chain.lagblocks", message: 'unknown key (did you mean "lag_blocks"?)' },
  { marker: "M4", at: "localhost", path: "status.listen", message: 'expected "host:port"' },
  { marker: "M5", at: "${STATUS_TOKEN}", path: "status.token", message: "environment variable STATUS_TOKEN is not set" },
  { marker: "M6", at: '"*/10', path: "defaults.schedule", message: "a schedule has 6 fields, seconds first" },
  { marker: "M7", at: '"0x1234"', path: "watches[0].account", message: "not an address" },
  { marker: "M8", at: "Token", path: "watches[1].name", message: "a watch name must be lowercase letters" },
  { marker: "M9", at: '"Transfer', path: "watches[1].events[0]", message: "write uint256/int256, not uint/int" },
  { marker: "M10", at: "contract", path: "watches[2].contract", message: "exactly one of account, accounts, collection, contract, contracts, every_block or balance; this one has collection and contract" },
  { marker: "M11", at: "hot-wallet", path: "watches[3].name", message: 'duplicate watch name "hot-wallet" (also watches[0])' },
  { marker: "M12", at: "sources", path: "watches[4].sources", message: "applies to account and accounts watches only" },
  { marker: "M21", at: '"*/10', path: "watches[5].schedule", message: "a schedule has 6 fields, seconds first (e.g. \"*/10 * * * * *\"); this one has 7" },
  { marker: "M13", at: "hot-walet", path: "rules[0].watch", message: 'no watch named "hot-walet" (did you mean "hot-wallet"?)' },
  { marker: "M14", at: "ops-slak", path: "rules[0].notify[0]", message: 'no sink named "ops-slak" (did you mean "ops-slack"?)' },
  { marker: "M15", at: "event_logs", path: "rules[1].source", message: 'watch "calls" produces internal_transactions, not event_logs' },
  { marker: "M16", at: "outflow", path: "rules[2].name", message: 'duplicate rule name "outflow" (also rules[0])' },
  { marker: "M17", at: "soon", path: "rules[2].group.window", message: "not a duration" },
  { marker: "M18", at: "http://", path: "sinks.audit.url", message: "must be https (set allow_http: true" },
  { marker: "M19", at: "telgram", path: "sinks.ops-tg.type", message: 'unknown type "telgram" (did you mean "telegram"?)' },
  { marker: "M20", at: "ops-slack", path: "sinks.ops-slack", message: "duplicate key" },
  // Below: mistakes that used to surface only after the others in their rule were fixed.
  { marker: "M22", at: "nowhere", path: "rules[3].notify[0]", message: 'no sink named "nowhere"' },
  { marker: "M23", at: "{ gte", path: "rules[3].when.amout", message: 'rule "leak", when.amout: unknown field "amout" for internal_transactions records' },
  { marker: "M24", at: "5", path: "rules[4].group.window", message: 'a duration needs a unit, e.g. "5ms" or "5s"' },
  { marker: "M25", at: '"{{amout}}', path: "rules[4].summary", message: 'unknown variable "{{amout}}" for internal_transactions' },
];

function positionOf(marker: string, at: string): { line: number; column: number } {
  const lines = TEXT.split("\n");
  const index = lines.findIndex((l) => l.trimEnd().endsWith(`# ${marker}`));
  if (index === -1) throw new Error(`marker ${marker} not found`);
  const column = (lines[index] ?? "").indexOf(at);
  if (column === -1) throw new Error(`"${at}" not found on the line of ${marker}`);
  return { line: index + 1, column: column + 1 };
}

describe("a config with twenty-five mistakes", () => {
  const error = configErrorOf(() => parseConfigText(TEXT, OPTIONS));

  it("reports all twenty-five in one run, and nothing else", () => {
    expect(EXPECTED).toHaveLength(25);
    expect(error.issues, error.format()).toHaveLength(25);
    expect(error.format().split("\n")).toHaveLength(25);
  });

  it("formats one line per problem, in file order", () => {
    const first = positionOf("M1", "requests_per_secnd");
    expect(error.format().split("\n")[0]).toBe(`config.yaml:${first.line}:${first.column} explorer.requests_per_secnd: unknown key (did you mean "requests_per_second"?)`);
    const order = error.issues.map((i) => i.line * 1000 + i.column);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it.each(EXPECTED)("$marker: $path at its line and column", ({ marker, at, path, message }) => {
    const issue = error.issues.find((i) => i.path === path);
    expect(issue, `no issue at ${path}; got:\n${error.format()}`).toBeDefined();
    expect(issue?.message).toContain(message);
    expect({ line: issue?.line, column: issue?.column }).toEqual(positionOf(marker, at));
  });

  it("a condition in a rule that is otherwise right is reported the same way", () => {
    const fixed = TEXT.replace("notify: [nowhere]            # M22", "notify: [ops-slack]");
    const again = configErrorOf(() => parseConfigText(fixed, OPTIONS));
    expect(again.issues.find((i) => i.path === "rules[3].when.amout")).toEqual(error.issues.find((i) => i.path === "rules[3].when.amout"));
    expect(again.issues).toHaveLength(24);
  });
});

describe("a sink with a wrong key", () => {
  it("still has its template and its other options checked, and each mistake is reported once", () => {
    const text = `watches: [ { name: w, every_block: true } ]
rules: [ { name: r, watch: w, notify: [chat, hook] } ]
sinks:
  chat: { type: slack, url: "https://hooks.slack.com/x", text: "{{#if}} {{ amout", rate_per_second: -1 }
  hook: { type: webhook, url: "http://example.com/h", headers: { "bad header": x }, timeout: 0s }
`;
    const error = configErrorOf(() => parseConfigText(text, OPTIONS));
    expect(error.format().split("\n")).toEqual([
      "config.yaml:4:64 sinks.chat.text: unclosed tag '{{' at line 1, column 9",
      "config.yaml:4:101 sinks.chat.rate_per_second: must be > 0",
      "config.yaml:5:31 sinks.hook.url: must be https (set allow_http: true to send over plain http, e.g. on a private network)",
      'config.yaml:5:66 sinks.hook.headers["bad header"]: not an HTTP header name',
      "config.yaml:5:94 sinks.hook.timeout: must be a whole number of milliseconds between 1 and 600000",
    ]);
  });
});
