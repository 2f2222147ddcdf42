import type { TortureSummary } from "./run-torture.js";

const n = (value: number) => value.toLocaleString("en-US");
const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([k, v]) => `${k} ${n(v)}`)
    .join(", ") || "none";

/** The summary as Markdown: what docs/benchmarks.md quotes. */
export function summaryMarkdown(summary: TortureSummary, machine: { cpu: string; cores: number; memory_gib: number; platform: string; node: string; date: string }, command: string): string {
  const s = summary;
  const lines = [
    "## torture",
    "",
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.platform}, Node ${machine.node}, ${machine.date}`,
    `Command: \`${command}\` (seed ${s.seed})`,
    "",
    `**${s.ok ? "PASSED" : "FAILED"}**: lost ${n(s.lost)}, gaps ${n(s.gaps)}, duplicates under a new id ${n(s.duplicates_new_id)}, unexpected ${n(s.unexpected)}; ${n(s.duplicates_same_id)} duplicates under their own id (allowed: at-least-once delivery, exactly-once per id).`,
    ...(s.failures.length ? ["", ...s.failures.map((f) => `- FAILURE: ${f}`)] : []),
    "",
    "| figure | value |",
    "| --- | ---: |",
    `| chaos duration | ${n(s.chaos_seconds)} s |`,
    `| final catch-up and delivery (\`kaiawatch once\`) | ${n(s.final_seconds)} s in ${s.final_runs} run(s) |`,
    `| SIGKILLs of \`kaiawatch run\` (each followed by a restart) | ${n(s.kills)} |`,
    `| daemons that exited on their own | ${n(s.unexpected_exits)} |`,
    `| blocks scanned (first ${s.blocks.first}) | ${Object.entries(s.blocks.scanned_by_source).map(([k, v]) => `${k} ${n(v)}`).join(", ")} |`,
    `| records the rules had to alert on | ${n(s.records_total)} (${counts(s.records)}) |`,
    `| explorer requests | ${n(s.explorer.requests)} (${counts(s.explorer.by_status)}) |`,
    `| explorer faults injected | ${counts(s.explorer.faults)} |`,
    `| explorer credits charged | ${n(s.explorer.credits)} |`,
    ...Object.entries(s.sink_faults).map(([sink, faults]) => `| sink faults injected: ${sink} | ${counts(faults as Record<string, number>)} |`),
    `| webhook signatures that did not verify | ${n(s.bad_signatures)} |`,
    `| torn lines in the file sink (re-sent) | ${n(s.torn_file_lines)} |`,
    `| outbox at the end | ${n(s.outbox_at_end.pending)} pending, ${n(s.outbox_at_end.dead)} dead |`,
    "",
    "| sink | expected | received | distinct | lost | duplicates (same id) | duplicates (new id) | unexpected |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...Object.entries(s.deliveries).map(([sink, d]) => `| ${sink} | ${n(d.expected)} | ${n(d.received)} | ${n(d.distinct)} | ${n(d.lost)} | ${n(d.duplicatesSameId)} | ${n(d.duplicatesNewId)} | ${n(d.unexpected)} |`),
    "",
    "Daemon log lines at warn and above, most frequent first:",
    "",
    ...Object.entries(s.daemon_log).map(([msg, count]) => `- ${n(count)} × ${msg}`),
    ...(s.examples.length ? ["", "Examples:", "", ...s.examples.map((e) => `- ${e}`)] : []),
    "",
  ];
  return lines.join("\n");
}
