import { readFileSync } from "node:fs";
import { Histogram } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/common/metrics.js";

/**
 * examples/grafana-dashboard.json queries the metrics of src/common/metrics.ts by name and
 * label: when a metric or a label is renamed or removed, this test fails instead of a
 * dashboard panel going quietly empty.
 */

interface Target {
  expr: string;
  legendFormat?: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
}

const dashboard = JSON.parse(readFileSync(new URL("../../examples/grafana-dashboard.json", import.meta.url), "utf8")) as Dashboard;

// The default process metrics too, as /metrics serves them (kaiawatch_process_*, kaiawatch_nodejs_*).
const registry = createMetrics({ defaultMetrics: true }).registry;
const METRICS = new Map(
  registry.getMetricsAsArray().map((metric) => {
    const m = metric as unknown as { name: string; labelNames?: readonly string[] };
    return [m.name, { labels: new Set(m.labelNames ?? []), histogram: metric instanceof Histogram }];
  }),
);
/** Added by Prometheus to every scraped series. */
const TARGET_LABELS = ["instance", "job"];

/** A series name as queried → the metric that defines it (histograms expose _bucket, _sum, _count). */
function metricOf(series: string): { name: string; labels: Set<string>; bucket: boolean } | undefined {
  const direct = METRICS.get(series);
  if (direct) return { name: series, labels: direct.labels, bucket: false };
  const m = /^(.*)_(bucket|sum|count)$/.exec(series);
  const base = m ? METRICS.get(m[1]!) : undefined;
  if (!m || !base?.histogram) return undefined;
  return { name: m[1]!, labels: base.labels, bucket: m[2] === "bucket" };
}

const queries: { where: string; expr: string; legend?: string }[] = [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr, legend: t.legendFormat }))),
  ...dashboard.templating.list.filter((v) => v.type === "query").map((v) => ({ where: `variable $${v.name}`, expr: v.definition ?? "" })),
];

describe("examples/grafana-dashboard.json", () => {
  it("names node's process metrics kaiawatch_process_* with \"process\" once", () => {
    expect(METRICS.has("kaiawatch_process_resident_memory_bytes")).toBe(true);
    expect([...METRICS.keys()].filter((name) => name.includes("process_process"))).toEqual([]);
  });

  it("is a dashboard with panels, each query panel with queries, ids unique and inside the 24-column grid", () => {
    expect(dashboard.uid).toBe("kaiawatch");
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      if (panel.type !== "row") expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    expect(queries.length).toBeGreaterThan(20);
  });

  it("queries only metrics that src/common/metrics.ts defines, with their own labels", () => {
    const problems: string[] = [];
    for (const { where, expr, legend } of queries) {
      const used = [...expr.matchAll(/\b(kaiawatch_[a-z0-9_]+)(\{([^}]*)\})?/g)];
      if (used.length === 0) problems.push(`${where}: no kaiawatch metric in ${expr}`);
      const known = new Set(TARGET_LABELS);
      for (const [, series, , matchers = ""] of used) {
        const metric = metricOf(series!);
        if (!metric) {
          problems.push(`${where}: ${series} is not a metric of src/common/metrics.ts`);
          continue;
        }
        for (const label of metric.labels) known.add(label);
        if (metric.bucket) known.add("le");
        for (const [, label] of matchers.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)) {
          if (!metric.labels.has(label!) && !TARGET_LABELS.includes(label!)) problems.push(`${where}: ${metric.name} has no label "${label}"`);
        }
      }
      for (const [, list] of expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)) {
        for (const label of list!.split(",").map((s) => s.trim()).filter(Boolean)) {
          if (!known.has(label)) problems.push(`${where}: grouped by "${label}", a label none of its metrics has`);
        }
      }
      // label_values(metric, LABEL)
      for (const [, label] of expr.matchAll(/label_values\([^,]*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)/g)) {
        if (!known.has(label!)) problems.push(`${where}: label_values of "${label}", a label its metric lacks`);
      }
      for (const [, label] of (legend ?? "").matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)) {
        if (!known.has(label!)) problems.push(`${where}: the legend shows "${label}", a label its metrics lack`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("shows what an operator needs: lag, cursor, ticks, matches, outbox, dead letters, latency, API status, credits vs budget, store writes", () => {
    const all = queries.map((q) => q.expr).join("\n");
    const required = [
      "kaiawatch_source_lag_blocks",
      "kaiawatch_source_cursor_block",
      "kaiawatch_source_ticks_total",
      "kaiawatch_rule_matches_total",
      "kaiawatch_outbox_pending",
      "kaiawatch_alerts_dead_total",
      "kaiawatch_delivery_latency_seconds_bucket",
      "kaiawatch_explorer_requests_total",
      "kaiawatch_explorer_credits_today",
      "kaiawatch_explorer_credit_budget",
      "kaiawatch_store_write_duration_seconds_bucket",
    ];
    expect(required.filter((name) => !new RegExp(`\\b${name}\\b`).test(all))).toEqual([]);
    expect(all).toMatch(/sum by \(status\) \(rate\(kaiawatch_explorer_requests_total/);
  });
});
