import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { Histogram } from "prom-client";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createMetrics } from "../../src/common/metrics.js";

/**
 * The Prometheus of examples/replicas/: its config and alert rules pass `promtool check`
 * (Debian's package prometheus; `.ci/run` installs it when promtool is missing, and without it
 * this test fails: it never skips), and every series the rules query is one kaiawatch
 * registers (src/common/metrics.ts), with labels it has, so a renamed metric breaks this test
 * rather than silencing an alert. The scrape targets are replicas of compose.yaml that list
 * their name in status.allowed_hosts (else they answer 421). `promtool test rules` shows the
 * main alerts firing on the series that should raise them, and not where replicas share work.
 */

const run = promisify(execFile);
const dir = fileURLToPath(new URL("../../examples/replicas/", import.meta.url));

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run("promtool", args, { cwd: dir });
    return stdout + stderr;
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (e.code === "ENOENT") throw new Error("promtool is not installed: install Debian's package prometheus (apt-get install prometheus; .ci/run does it)");
    throw new Error(`promtool ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

const registry = createMetrics({ defaultMetrics: true }).registry;
const METRICS = new Map(
  registry.getMetricsAsArray().map((metric) => {
    const m = metric as unknown as { name: string; labelNames?: readonly string[] };
    return [m.name, { labels: new Set(m.labelNames ?? []), histogram: metric instanceof Histogram }];
  }),
);

interface Rule {
  alert: string;
  expr: string;
}
const rules = (parse(readFileSync(`${dir}prometheus/kaiawatch.rules.yml`, "utf8")) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules);

describe("examples/replicas/prometheus", () => {
  it("passes promtool check rules and check config", { timeout: 30_000 }, async () => {
    expect(await promtool("check", "rules", "prometheus/kaiawatch.rules.yml")).toContain("SUCCESS");
    // --syntax-only: the credentials file is the compose secret, which exists only in the container.
    expect(await promtool("check", "config", "--syntax-only", "prometheus/prometheus.yml")).toContain("SUCCESS");
  });

  it("fires the alerts of its unit tests (test/ops/prometheus-rules.test.yml) where they should, and not where they should not", { timeout: 30_000 }, async () => {
    expect(await promtool("test", "rules", fileURLToPath(new URL("prometheus-rules.test.yml", import.meta.url)))).toContain("SUCCESS");
  });

  it("queries only metrics and labels kaiawatch registers", () => {
    expect(rules.length).toBeGreaterThan(5);
    for (const rule of rules) {
      for (const match of rule.expr.matchAll(/\b(kaiawatch_[a-z_]+)(\{([^}]*)\})?/g)) {
        const series = match[1]!;
        const base = METRICS.get(series) ?? METRICS.get(series.replace(/_(bucket|sum|count)$/, ""));
        expect(base, `${rule.alert}: ${series} is not a metric kaiawatch registers`).toBeDefined();
        for (const label of (match[3] ?? "").matchAll(/([a-z_]+)\s*(=~|!~|!=|=)/g)) {
          const allowed = new Set([...base!.labels, "instance", "job", ...(series.endsWith("_bucket") ? ["le"] : [])]);
          expect(allowed.has(label[1]!), `${rule.alert}: ${series} has no label ${label[1]}`).toBe(true);
        }
      }
      for (const by of rule.expr.matchAll(/\bby \(([^)]*)\)/g)) {
        for (const label of by[1]!.split(",").map((l) => l.trim())) {
          const known = label === "le" || label === "instance" || label === "job" || [...METRICS.values()].some((m) => m.labels.has(label));
          expect(known, `${rule.alert}: no metric has the label ${label}`).toBe(true);
        }
      }
    }
  });

  it("scrapes the replicas of compose.yaml by names they allow, with the token compose.yaml mounts", () => {
    const prometheus = parse(readFileSync(`${dir}prometheus/prometheus.yml`, "utf8")) as {
      rule_files: string[];
      scrape_configs: Array<{ authorization?: { credentials_file?: string }; static_configs: Array<{ targets: string[] }> }>;
    };
    const compose = parse(readFileSync(`${dir}compose.yaml`, "utf8"), { merge: true }) as { services: Record<string, { secrets?: string[] }> };
    const config = parse(readFileSync(`${dir}config.yaml`, "utf8")) as { status: { allowed_hosts: string[]; listen: string } };
    expect(prometheus.rule_files).toEqual(["kaiawatch.rules.yml"]);
    const [job] = prometheus.scrape_configs;
    expect(job!.authorization?.credentials_file).toBe("/run/secrets/status_token");
    expect(compose.services.prometheus!.secrets).toContain("status_token");
    const targets = job!.static_configs.flatMap((c) => c.targets);
    const replicas = Object.keys(compose.services).filter((name) => name.startsWith("kaiawatch-"));
    expect(targets.map((t) => t.split(":")[0]).sort()).toEqual(replicas.sort());
    for (const target of targets) {
      const [host, port] = target.split(":");
      expect(config.status.allowed_hosts, `${host} answers 421 unless status.allowed_hosts lists it`).toContain(host);
      expect(config.status.listen.endsWith(`:${port}`)).toBe(true);
    }
  });
});
