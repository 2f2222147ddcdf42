import { afterAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { ConfigError, parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { configErrorOf, issueAt } from "../config/helpers.js";
import { memoryIO, quietCommon, tempDir } from "../helpers/harness.js";
import { openStore } from "../../src/store/open-store.js";
import { entry } from "../notify/dispatcher-fixtures.js";

const dir = tempDir("kaiawatch-routes-");
afterAll(() => dir.remove());

const CONFIG = `
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
watches:
  - { name: treasury, account: "0x1111111111111111111111111111111111111111" }
rules:
  - name: big-outflow
    watch: treasury
    labels: { severity: critical, team: treasury }
  - name: nft-moves
    watch: treasury
    notify: [audit]
sinks:
  ops-slack: { type: console }
  ops-pager: { type: console }
  treasury-email: { type: console }
  audit: { type: console }
routes:
  receiver: ops-slack
  group_by: [rule, watch]
  routes:
    - matchers: ['severity="critical"']
      receiver: ops-pager
      group_wait: 10s
      continue: true
    - matchers: [team=treasury]
      receiver: treasury-email
      repeat_interval: 1h
`;
const configPath = join(dir.path, "config.yaml");
writeFileSync(configPath, CONFIG);

async function routes(...args: string[]) {
  const io = memoryIO();
  const code = await main(["routes", "--config", configPath, ...args], io);
  return { code, out: io.out(), err: io.err() };
}

describe("kaiawatch routes", () => {
  it("--test prints the sinks first, then each route the alert ends at with its grouping and group", async () => {
    const { code, out } = await routes("--test", "severity=critical", "team=treasury", "rule=big-outflow", "watch=treasury");
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "ops-pager,treasury-email",
        '  labels {rule="big-outflow", severity="critical", team="treasury", watch="treasury"}',
        '  routes.routes[0]  {severity="critical"} → ops-pager  group_by: rule, watch  wait 10s, interval 5m, repeat 4h  continue',
        '    group {rule="big-outflow", watch="treasury"}',
        '  routes.routes[1]  {team="treasury"} → treasury-email  group_by: rule, watch  wait 30s, interval 5m, repeat 1h',
        '    group {rule="big-outflow", watch="treasury"}',
        "",
      ].join("\n"),
    );
  });

  it("--test says which group_by labels the alert lacks: it joins one group with every alert that lacks them", async () => {
    const { code, out } = await routes("--test", "team=treasury", "rule=big-outflow");
    expect(code).toBe(0);
    expect(out).toContain('    group {rule="big-outflow"}  (no watch: one group with every alert that has none)\n');
  });

  it("--rule starts from a rule's labels; a rule with notify: goes past the tree", async () => {
    expect((await routes("--test", "--rule", "big-outflow")).out.split("\n")[0]).toBe("ops-pager,treasury-email");
    const direct = await routes("--rule", "nft-moves");
    expect(direct.out).toBe("audit\n  rule nft-moves has notify: its alerts go to audit, past the routes: tree\n");
    // An operational alert: no child matches, the root takes it.
    expect((await routes("--test", "rule=kaiawatch.operational", "kind=source_failing")).out.split("\n")[0]).toBe("ops-slack");
  });

  it("--verify exits 1 when the sinks differ (for CI), 0 when they are the same in any order", async () => {
    expect((await routes("--test", "team=treasury", "severity=critical", "--verify", "treasury-email,ops-pager")).code).toBe(0);
    const wrong = await routes("--test", "team=treasury", "--verify", "ops-pager");
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("expected ops-pager, the alert goes to treasury-email");
  });

  it("prints the tree; --tree with --test marks where the alert ends", async () => {
    const tree = await routes();
    expect(tree.out.split("\n")).toEqual([
      "routes  (every alert) → ops-slack  group_by: rule, watch  wait 30s, interval 5m, repeat 4h",
      '  routes.routes[0]  {severity="critical"} → ops-pager  group_by: rule, watch  wait 10s, interval 5m, repeat 4h  continue',
      '  routes.routes[1]  {team="treasury"} → treasury-email  group_by: rule, watch  wait 30s, interval 5m, repeat 1h',
      "",
    ]);
    const marked = await routes("--test", "--tree", "team=treasury");
    expect(marked.out).toContain("routes.routes[1]  {team=\"treasury\"} → treasury-email  group_by: rule, watch  wait 30s, interval 5m, repeat 1h  ◀");
    expect(marked.out).not.toContain("continue  ◀");
  });

  it("labels that are not NAME=VALUE are a usage error", async () => {
    const bad = await routes("--test", "severity");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('not a label: "severity"; write NAME=VALUE');
    expect((await routes("team=x")).err).toContain("labels are for --test");
  });
});

describe("routes and labels in the config: every mistake with its key path and line", () => {
  const parse = (text: string) => parseConfigText(text, { fileName: "test.yaml", env: {}, checks: CONFIG_CHECKS });

  it("reports them all at once", () => {
    const text = `
watches:
  - { name: w, account: "0x1111111111111111111111111111111111111111" }
rules:
  - name: r1
    watch: w
    severity: warning
    labels: { severity: critical, team: 7, watch: other, "bad-name": x }
sinks:
  out: { type: console }
  beat: { type: heartbeat, url: "https://hc.example.com/ping/x", interval: 1m }
routes:
  matchers: [team=x]
  routes:
    - matchers: ['team=~"(open"', "severity"]
      receiver: outt
    - receiver: [out, beat]
      group_by: ["...", rule]
      group_wait: 30
`;
    const error = configErrorOf(() => parse(text));
    expect(error).toBeInstanceOf(ConfigError);
    const at = issueAt(text, error);
    at("routes:\n  matchers", "routes", "the root route needs a receiver");
    at("[team=x]", "routes.matchers", "the root route matches every alert");
    at("'team=~", "routes.routes[0].matchers[0]", "error parsing regexp: missing closing )");
    at('"severity"]', "routes.routes[0].matchers[1]", "bad matcher format: severity");
    at("outt", "routes.routes[0].receiver", 'no sink named "outt" (did you mean "out"?)');
    at("beat]", "routes.routes[1].receiver[1]", "heartbeat sink");
    at('"...", rule', "routes.routes[1].group_by", '"..." groups by every label already');
    at("30\n", "routes.routes[1].group_wait", "a duration needs a unit");
    at("7,", "rules[0].labels.team", "label values are text");
    at("other", "rules[0].labels.watch", "set by kaiawatch");
    at('x }', "rules[0].labels.bad-name", "not a label name");
    at("critical,", "rules[0].labels.severity", "disagrees with the rule's severity: warning");
  });

  it("a rule without notify: needs a routes: tree", () => {
    const text = `
watches:
  - { name: w, account: "0x1111111111111111111111111111111111111111" }
rules:
  - name: r1
    watch: w
sinks:
  out: { type: console }
`;
    expect(configErrorOf(() => parse(text)).format()).toMatch(/^test\.yaml:5:\d+ rules\[0\]: needs notify: \(sink names\) or a routes: tree/);
  });
});

describe("kaiawatch outbox and a routed alert", () => {
  it("says which group and route a pending alert waits for", async () => {
    const common = quietCommon();
    const store = await openStore(common, { path: join(dir.path, "store.db") });
    const created = new Date();
    const base = entry("kw_routed", "treasury-email", "big-outflow", { createdAt: created.toISOString() });
    const labels = { rule: "big-outflow", severity: "critical", source: "nft_transfers", team: "treasury", watch: "treasury" };
    await store.commitWindow({ cursor: { key: "test", watch: "treasury", source: "nft_transfers", description: "test", block: 1, updated_at: created.toISOString() }, entries: [{ ...base, alert: { ...base.alert, labels } }] });
    await store.close();
    const io = memoryIO();
    expect(await main(["outbox", "--config", configPath], io)).toBe(0);
    expect(io.out()).toContain('waiting for the next message of its group {rule="big-outflow", watch="treasury"} on route routes.routes[1] (group_wait 30s, group_interval 5m)');
  });
});
