import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { configErrorOf } from "./helpers.js";

/*
 * One config with twenty different mistakes. Each expected problem names the marker
 * comment of its line, the text its column must point at, the key path and a fragment
 * of the message, so the test checks position, path and wording of every report.
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
    events: ["Transfer(address, address, uint256)"]   # M9
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
  { marker: "M9", at: '"Transfer', path: "watches[1].events[0]", message: "without spaces or parameter names" },
  { marker: "M10", at: "contract", path: "watches[2].contract", message: "exactly one of account, collection, contract or every_block; this one has collection and contract" },
  { marker: "M11", at: "hot-wallet", path: "watches[3].name", message: 'duplicate watch name "hot-wallet" (also watches[0])' },
  { marker: "M12", at: "sources", path: "watches[4].sources", message: "applies to account watches only" },
  { marker: "M13", at: "hot-walet", path: "rules[0].watch", message: 'no watch named "hot-walet" (did you mean "hot-wallet"?)' },
  { marker: "M14", at: "ops-slak", path: "rules[0].notify[0]", message: 'no sink named "ops-slak" (did you mean "ops-slack"?)' },
  { marker: "M15", at: "event_logs", path: "rules[1].source", message: 'watch "calls" produces internal_transactions, not event_logs' },
  { marker: "M16", at: "outflow", path: "rules[2].name", message: 'duplicate rule name "outflow" (also rules[0])' },
  { marker: "M17", at: "soon", path: "rules[2].group.window", message: "not a duration" },
  { marker: "M18", at: "http://", path: "sinks.audit.url", message: "must be https (set allow_http: true" },
  { marker: "M19", at: "telgram", path: "sinks.ops-tg.type", message: 'unknown type "telgram" (did you mean "telegram"?)' },
  { marker: "M20", at: "ops-slack", path: "sinks.ops-slack", message: "duplicate key" },
];

function positionOf(marker: string, at: string): { line: number; column: number } {
  const lines = TEXT.split("\n");
  const index = lines.findIndex((l) => l.includes(`# ${marker}`) && l.trimEnd().endsWith(`# ${marker}`));
  if (index === -1) throw new Error(`marker ${marker} not found`);
  const column = (lines[index] ?? "").indexOf(at);
  if (column === -1) throw new Error(`"${at}" not found on the line of ${marker}`);
  return { line: index + 1, column: column + 1 };
}

describe("a config with twenty mistakes", () => {
  const error = configErrorOf(() => parseConfigText(TEXT, { fileName: "config.yaml", env: {} }));

  it("reports all twenty at once, and nothing else", () => {
    expect(error.code).toBe("KW_CONFIG_INVALID");
    expect(error.issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toHaveLength(EXPECTED.length);
  });

  it.each(EXPECTED)("$marker: $path at its line and column", ({ marker, at, path, message }) => {
    const where = positionOf(marker, at);
    const issue = error.issues.find((i) => i.path === path);
    expect(issue, `no issue at ${path}; got:\n${error.format()}`).toBeDefined();
    expect(issue?.message).toContain(message);
    expect({ line: issue?.line, column: issue?.column }).toEqual(where);
    expect(issue?.file).toBe("config.yaml");
  });

  it("formats one line per problem, in file order", () => {
    const lines = error.format().split("\n");
    expect(lines).toHaveLength(20);
    const first = positionOf("M1", "requests_per_secnd");
    expect(lines[0]).toBe(`config.yaml:${first.line}:${first.column} explorer.requests_per_secnd: unknown key (did you mean "requests_per_second"?)`);
    const order = error.issues.map((i) => i.line * 1000 + i.column);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});
