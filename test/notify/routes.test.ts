import { describe, expect, it } from "vitest";
import type { Config } from "../../src/config/index.js";
import { alertLabels, type Labels } from "../../src/notify/labels.js";
import { groupLabels, matchRoutes, receiversOf, type Route } from "../../src/notify/routes.js";
import { configFromText } from "../helpers/harness.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { nftTransfer } from "../rules/fixtures.js";
import { repeatIntervalsOf } from "../../src/daemon/repeat-interval.js";
import type { AlertDocument } from "../../src/model/alert-document.js";

/*
 * Alertmanager's own routing examples, translated to kaiawatch: its `alertname` is the `rule`
 * label, `service` is `watch` (both are labels every kaiawatch alert carries), and the other
 * labels (cluster, database, owner, severity, team, product, environment) are a rule's own
 * `labels:`. Receivers are sinks (lowercase: sink names are slugs). What must come out is
 * what Alertmanager's dispatcher does with the same alerts: the same receivers, in the same
 * order, with the same group_by, group_wait, group_interval and repeat_interval.
 */

const HEAD = `
watches:
  - name: foo1
    account: "0x1111111111111111111111111111111111111111"
`;

function sinks(names: string[]): string {
  return `sinks:\n${names.map((name) => `  ${name}: { type: console }`).join("\n")}\n`;
}

/** doc/examples/simple.yml of prometheus/alertmanager, its route section. */
const SIMPLE = `${HEAD}${sinks(["team-x-mails", "team-x-pager", "team-y-mails", "team-y-pager", "team-db-pager"])}
routes:
  group_by: [rule, cluster, watch]
  group_wait: 30s
  group_interval: 5m
  repeat_interval: 3h
  receiver: team-x-mails
  routes:
    - matchers: ['watch=~"foo1|foo2|baz"']
      receiver: team-x-mails
      routes:
        - matchers: ['severity="critical"']
          receiver: team-x-pager
    - matchers: ['watch="files"']
      receiver: team-y-mails
      routes:
        - matchers: ['severity="critical"']
          receiver: team-y-pager
    - matchers: ['watch="database"']
      receiver: team-db-pager
      group_by: [rule, cluster, database]
      routes:
        - matchers: ['owner="team-X"']
          receiver: team-x-pager
          continue: true
        - matchers: ['owner="team-Y"']
          receiver: team-y-pager
`;

/** The routing example of docs/configuration.md (time intervals left out: kaiawatch has none; they mute sends, not matches). */
const CONFIGURATION_MD = `${HEAD}${sinks(["default-receiver", "database-pager", "frontend-pager", "dev-pager", "on-call-pager"])}
routes:
  receiver: default-receiver
  group_wait: 30s
  group_interval: 5m
  repeat_interval: 4h
  group_by: [cluster, rule]
  routes:
    - receiver: database-pager
      group_wait: 10s
      matchers: ['watch=~"mysql|cassandra"']
    - receiver: frontend-pager
      group_by: [product, environment]
      matchers: ['team="frontend"']
    - receiver: dev-pager
      matchers: ['watch="inhouse-service"']
      continue: true
    - receiver: on-call-pager
      matchers: ['watch="inhouse-service"']
`;

interface Expected {
  receivers: string[];
  groupBy: string[];
  waitS: number;
  intervalS?: number;
  repeatH: number;
}

function routeOf(config: Config, labels: Labels) {
  const root = config.routes as Route;
  const ends = matchRoutes(root, labels);
  return { receivers: receiversOf(ends), ends };
}

function expectRouting(config: Config, labels: Labels, expected: Expected): void {
  const { receivers, ends } = routeOf(config, labels);
  expect(receivers, JSON.stringify(labels)).toEqual(expected.receivers);
  for (const route of ends) {
    expect(route.groupBy).toEqual(expected.groupBy);
    expect(route.groupWaitMs).toBe(expected.waitS * 1000);
    expect(route.groupIntervalMs).toBe((expected.intervalS ?? 300) * 1000);
    expect(route.repeatIntervalMs).toBe(expected.repeatH * 3600_000);
  }
}

/** A rule alert's labels, as the daemon makes them. */
const ruleAlert = (rule: string, watch: string, labels: Record<string, string> = {}) => alertLabels({ rule, watch, source: "nft_transfers", labels });

describe("Alertmanager's doc/examples/simple.yml, translated", () => {
  const config = configFromText(SIMPLE);
  const X_GROUPING = { groupBy: ["rule", "cluster", "watch"], waitS: 30, repeatH: 3 };
  const DB_GROUPING = { groupBy: ["rule", "cluster", "database"], waitS: 30, repeatH: 3 };

  it("critical alerts of team X's services page team X; the others mail it", () => {
    expectRouting(config, ruleAlert("latency-high", "foo1", { severity: "critical", cluster: "a" }), { receivers: ["team-x-pager"], ...X_GROUPING });
    expectRouting(config, ruleAlert("latency-high", "baz", { severity: "warning" }), { receivers: ["team-x-mails"], ...X_GROUPING });
    expectRouting(config, ruleAlert("latency-high", "foo2"), { receivers: ["team-x-mails"], ...X_GROUPING });
  });

  it("the files service goes to team Y, paged when critical", () => {
    expectRouting(config, ruleAlert("disk-full", "files", { severity: "critical" }), { receivers: ["team-y-pager"], ...X_GROUPING });
    expectRouting(config, ruleAlert("disk-full", "files", { severity: "info" }), { receivers: ["team-y-mails"], ...X_GROUPING });
  });

  it("database alerts go to their owner (team X continues, and nothing after it matches), else to the DB team; grouped by database", () => {
    expectRouting(config, ruleAlert("replication-lag", "database", { owner: "team-X", database: "users" }), { receivers: ["team-x-pager"], ...DB_GROUPING });
    expectRouting(config, ruleAlert("replication-lag", "database", { owner: "team-Y" }), { receivers: ["team-y-pager"], ...DB_GROUPING });
    expectRouting(config, ruleAlert("replication-lag", "database"), { receivers: ["team-db-pager"], ...DB_GROUPING });
    // `amtool config routes test --verify.receivers=team-DB-pager service=database` (the amtool README's example).
    expect(routeOf(config, { watch: "database" }).receivers).toEqual(["team-db-pager"]);
  });

  it("anything else stays at the root: regexes are anchored (foo10 is not foo1)", () => {
    expectRouting(config, ruleAlert("x", "foo10", { severity: "critical" }), { receivers: ["team-x-mails"], ...X_GROUPING });
    expect(routeOf(config, ruleAlert("x", "foo10")).ends.map((route) => route.id)).toEqual(["routes"]);
  });

  it("the alert's group is the values of its route's group_by labels", () => {
    const labels = ruleAlert("replication-lag", "database", { owner: "team-X", database: "users", cluster: "eu" });
    const [end] = routeOf(config, labels).ends;
    expect(end?.id).toBe("routes.routes[2].routes[0]");
    expect(groupLabels(end as Route, labels)).toEqual({ rule: "replication-lag", cluster: "eu", database: "users" });
  });

  it("a rule without notify: is sent where the tree routes its labels; with notify:, there only", () => {
    const withRules = configFromText(`${SIMPLE}
rules:
  - name: db-lag
    watch: foo1
    labels: { owner: team-Y, cluster: eu }
  - name: critical-foo
    watch: foo1
    severity: critical
  - name: direct
    watch: foo1
    severity: critical
    notify: [team-db-pager]
`);
    const byName = new Map(withRules.rules.map((rule) => [rule.name, rule]));
    // db-lag is on watch foo1 (team X's service), not database: its owner label is not looked at.
    expect(byName.get("db-lag")).toMatchObject({ notify: ["team-x-mails"], routed: true, labels: { owner: "team-Y", cluster: "eu" } });
    expect(byName.get("critical-foo")).toMatchObject({ notify: ["team-x-pager"], routed: true });
    expect(byName.get("direct")).toMatchObject({ notify: ["team-db-pager"], routed: false });
  });
});

describe("Alertmanager's docs/configuration.md routing example, translated", () => {
  const config = configFromText(CONFIGURATION_MD);
  const ROOT = { groupBy: ["cluster", "rule"], waitS: 30, repeatH: 4 };

  it("mysql and cassandra page the database team after 10s, inheriting the rest", () => {
    expectRouting(config, ruleAlert("slow-queries", "mysql", { cluster: "c1" }), { receivers: ["database-pager"], ...ROOT, waitS: 10 });
    // The first matching child without continue ends the search: team=frontend is not reached.
    expectRouting(config, ruleAlert("slow-queries", "cassandra", { team: "frontend" }), { receivers: ["database-pager"], ...ROOT, waitS: 10 });
  });

  it("the frontend team's alerts are grouped by product and environment instead", () => {
    expectRouting(config, ruleAlert("errors", "web", { team: "frontend", product: "shop", environment: "prod" }), { receivers: ["frontend-pager"], ...ROOT, groupBy: ["product", "environment"] });
  });

  it("continue: the in-house service reaches both the dev pager and the on-call pager, in order", () => {
    expectRouting(config, ruleAlert("crash", "inhouse-service"), { receivers: ["dev-pager", "on-call-pager"], ...ROOT });
  });

  it("the rest remains at the root", () => {
    expectRouting(config, ruleAlert("crash", "mysql-replica"), { receivers: ["default-receiver"], ...ROOT });
    expectRouting(config, {}, { receivers: ["default-receiver"], ...ROOT });
  });
});

describe("the routes tree in the config", () => {
  it("applies Alertmanager's defaults at the root, ... groups by every label, and a list of sinks is one receiver", () => {
    const config = configFromText(`${HEAD}${sinks(["a", "b"])}
routes:
  receiver: a
  routes:
    - matchers: [severity=critical]
      receiver: [a, b]
      group_by: ["..."]
`);
    const root = config.routes as Route;
    expect(root).toMatchObject({ receivers: ["a"], groupBy: [], groupWaitMs: 30_000, groupIntervalMs: 300_000, repeatIntervalMs: 4 * 3600_000 });
    const [critical] = matchRoutes(root, { severity: "critical", team: "x" });
    expect(critical).toMatchObject({ receivers: ["a", "b"], groupBy: "all" });
    expect(groupLabels(critical as Route, { severity: "critical", team: "x" })).toEqual({ severity: "critical", team: "x" });
  });
});

describe("a rule's alerts carry its labels", () => {
  it("rule, watch, source, severity and its own labels: what the tree matched when the config was loaded", () => {
    const config = configFromText(`${HEAD}${sinks(["a"])}
routes: { receiver: a }
rules:
  - { name: moves, watch: foo1, severity: warning, labels: { team: treasury } }
`);
    const plan = planFromConfig(config);
    const rule = plan.sources.flatMap((source) => source.rules).find((r) => r.name === "moves");
    const alert = rule?.toAlert(nftTransfer(), new Date());
    expect(alert?.labels).toEqual({ rule: "moves", severity: "warning", source: "nft_transfers", team: "treasury", watch: "foo1" });
    expect(alert?.severity).toBe("warning");
  });
});

describe("repeat_interval of a routed episode", () => {
  it("is its first route's, unless its rule or operational: sets one; a rule with notify: keeps its own only", () => {
    const config = configFromText(`
watches:
  - { name: payer, balance: ["0x00000000000000000000000000000000000fee00"], schedule: "0 * * * * *" }
${sinks(["a", "b"])}
routes:
  receiver: a
  repeat_interval: 2h
  routes:
    - { matchers: [team=treasury], receiver: b, repeat_interval: 30m, continue: true }
    - { matchers: [team=treasury], receiver: a, repeat_interval: 10m }
rules:
  - { name: routed, watch: payer, labels: { team: treasury }, when: { balance: { lt: "1 KAIA" } } }
  - { name: own, watch: payer, repeat_interval: 5m, when: { balance: { lt: "1 KAIA" } } }
  - { name: direct, watch: payer, notify: [a], when: { balance: { lt: "1 KAIA" } } }
`);
    const interval = repeatIntervalsOf(config);
    const alert = (rule: string, labels: Record<string, string>) => ({ rule, watch: "payer", source: "balances", labels: { rule, watch: "payer", source: "balances", ...labels } }) as unknown as AlertDocument;
    expect(interval(alert("routed", { team: "treasury" }))).toBe(30 * 60_000);
    expect(interval(alert("own", {}))).toBe(5 * 60_000);
    expect(interval(alert("direct", {}))).toBeUndefined();
    expect(interval(alert("kaiawatch.operational", { kind: "source_failing" }))).toBe(2 * 3600_000);
    // Without a tree, nothing changes: no reminders unless asked.
    expect(repeatIntervalsOf({ ...config, routes: undefined } as Config)(alert("routed", { team: "treasury" }))).toBeUndefined();
  });
});
