import { EXIT_OK, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { isEverySecond, isHeadSchedule } from "../../config/schedule.js";
import { UsageError, loadConfigForCommand, parseCommandArgs } from "../bootstrap.js";
import type { Config } from "../../config/index.js";
import { formatSeconds, planCredits, planSourceChoices, type CreditPlan, type SourceChoiceCost } from "../../watch/credit-plan.js";

const HELP = `Usage: kaiawatch plan [--config PATH] [--date YYYY-MM-DD] [--json]

Shows what a config costs at the explorer in one UTC day, without contacting anything:
per source its operation, schedule and credits (--wide: ticks and requests too); the enrichments' cost
per lookup; the total against explorer.daily_credit_budget; and warnings (an operation
only the PRO_PLUS plan has, a schedule slower than its block window, a request rate
above half of requests_per_second, the hour the budget runs out). Where watches could share a
source (operation 8 for accounts' internal transactions, one unfiltered operation 11 for a
contract's events, one operation 3 or 4 for several watches of an account or collection),
it shows the planner's choice and each rejected alternative with its cost and the reason.

The JSON-RPC calls at chain.rpc_url (no credits) are counted below the table: the
transactions source (one kaia_getBlockReceipts a block, shared by every account watch with
sources: [transactions]), the node's log sources (one eth_getLogs a window, shared by every
watch with source: node or both), with chain.traces its traces source (one
debug_traceBlockByNumber and one block time a block, shared by every account and
every_block watch whose internal transactions it reads) and the balance watches' readings,
against chain.requests_per_second. When the config has contract, collection or account
watches (with chain.traces, every_block watches too), "source choices" shows what reading
them from the explorer, the node or both would cost a day (credits, explorer requests,
node requests).

The estimate assumes Kaia's one block a second and a quiet chain: a tick covers the
blocks made since the previous tick, in windows of at most max_window_blocks blocks,
one request each when a window fits in one page (page_size records). Each further
page of a busy window costs the operation again. Operation 8 (every_block) asks once
per block. Enrichments cost per distinct lookup not in the cache, which depends on how
often rules match: they are listed but not in the total.

The request rate is for the whole config: the sources may use at most half of
explorer.requests_per_second on average; the other half is kept for catching up (a start
in the past, downtime), where operation 8 asks once per block behind. When the cheapest
choice needs more, the planner takes dearer alternatives with fewer requests, the
cheapest per request saved first; when nothing fits, it keeps the cheapest and warns.
The plan shows how long an hour behind takes to catch up at the rate left over.

Options:
  -c, --config PATH   the config file (default ./config.yaml)
  --date YYYY-MM-DD   the UTC day to lay the schedules out on (default today)
  --json              the plan as JSON
  --wide              the sources' table with every column (ticks and requests a day, credits a tick) and
                      whole descriptions; without it the table fits 100 columns
`;

const OPTIONS = {
  config: { type: "string", short: "c", default: "./config.yaml" },
  date: { type: "string" },
  json: { type: "boolean", default: false },
  wide: { type: "boolean", default: false },
} as const;

const n = (value: number) => Math.round(value).toLocaleString("en-US");

function table(rows: string[][], textColumns: number): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  // Text columns left, figures right.
  return rows.map((row) => row.map((cell, i) => (i < textColumns ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ").trimEnd());
}

/** The narrow table's text cells: addresses as 0x1234…abcd, and cut to `max` characters. */
function narrow(text: string, max: number): string {
  const short = text.replace(/0x([0-9a-fA-F]{4})[0-9a-fA-F]{32}([0-9a-fA-F]{4})/g, "0x$1…$2");
  return short.length <= max ? short : `${short.slice(0, max - 1)}…`;
}

/** `wide`: every column with whole descriptions; else a table that fits 100 columns. */
export function formatPlan(plan: CreditPlan, config: Config, path: string, options: { wide?: boolean; choices?: readonly SourceChoiceCost[] } = {}): string {
  const choices = options.choices;
  const lines: string[] = [`kaiawatch plan: ${path}, UTC day ${plan.day}, one block a second`, ""];
  if (options.wide === true) {
    const rows = [["watch", "source", "op", "schedule", "ticks/day", "requests/day", "credits/day", "credits/tick"]];
    for (const s of plan.sources) {
      rows.push([s.watches.join(", "), s.description, String(s.operationNumber), s.schedule, n(s.ticksPerDay), n(s.requestsPerDay), n(s.creditsPerDay), s.creditsPerTick.toFixed(s.creditsPerTick % 1 === 0 ? 0 : 2)]);
    }
    rows.push(["total", "", "", "", "", n(plan.requestsPerDay), n(plan.creditsPerDay), ""]);
    lines.push(...table(rows, 4));
  } else {
    // 16 + 46 + 2 + 14 + 11 and the gaps: 99 columns at most.
    const rows = [["watch", "source", "op", "schedule", "credits/day"]];
    for (const s of plan.sources) rows.push([narrow(s.watches.join(", "), 16), narrow(s.description, 46), String(s.operationNumber), narrow(s.schedule, 14), n(s.creditsPerDay)]);
    rows.push(["total", "", "", "", n(plan.creditsPerDay)]);
    lines.push(...table(rows, 4));
    if (plan.sources.length > 0) lines.push("(--wide: whole descriptions, ticks, requests and credits a tick)");
  }
  if (plan.sources.length === 0) {
    const node = plan.rpc.transactions !== undefined || plan.rpc.logSources.length > 0;
    lines.push(!node ? "(no source is polled: no rule reads a watch)" : plan.rpc.logSources.length === 0 ? "(no explorer source: the transactions source reads the node, below)" : "(no explorer source: the node's sources are below)");
  }
  for (const watch of plan.idleWatches) lines.push(`watch ${watch}: no rule reads it, so it is not polled (0 credits)`);
  if (plan.sources.some((s) => isHeadSchedule(s.schedule))) {
    const interval = config.chain.head_interval;
    lines.push(
      `schedule head: a source ticks when the head passes its cursor, read every ${interval} ms over JSON-RPC (eth_blockNumber, no explorer credits; ${n(86_400_000 / interval)} reads a day). Costed above as one tick a block, what a schedule of every second costs at one block a second; never more, less when a tick covers several blocks.`,
    );
  }
  const everySecond = [...new Set(plan.sources.filter((s) => isEverySecond(s.schedule)).map((s) => s.watch))];
  if (everySecond.length > 0) {
    lines.push(
      `every second: ${everySecond.join(", ")} ${everySecond.length === 1 ? "polls" : "poll"} on a one-second clock; "schedule: head" costs the same credits at one block a second and delivers within about ${config.chain.head_interval} ms of the block instead of half a second on average (docs/head-schedule.md).`,
    );
  }
  lines.push("");
  if (plan.budget === undefined) {
    lines.push("budget: none (explorer.daily_credit_budget is not set)");
  } else {
    const share = (plan.creditsPerDay / plan.budget) * 100;
    lines.push(`budget: ${n(plan.creditsPerDay)} of ${n(plan.budget)} credits a day (${share.toFixed(1)}%)`);
  }
  const rps = config.explorer.requests_per_second;
  lines.push(`requests: ${plan.requestsPerSecond.toFixed(2)} a second on average (explorer.requests_per_second: ${rps}, of which at most ${plan.steadyStateShare * 100}%, ${(rps * plan.steadyStateShare).toFixed(2)}, for the steady state; the rest is for catching up)`);
  const { catchUp } = plan;
  const took = (seconds: number | null) => (seconds === null ? "never: no request a second is spare" : `about ${formatSeconds(seconds)}`);
  lines.push(`catch-up: an hour behind (after downtime) is ${n(catchUp.requestsPerHourBehind)} requests (operation 8 asks once per block, the others once per window); at ${catchUp.spareRequestsPerSecond.toFixed(2)} spare requests a second, ${took(catchUp.secondsPerHourBehind)}`);
  if (catchUp.startRequests > 0) lines.push(`catch-up from the watches' start (start: -N): ${n(catchUp.startRequests)} requests, ${took(catchUp.startSeconds)}`);
  if (plan.rpc.balanceWatches.length > 0 || plan.rpc.startupCalls > 0 || plan.rpc.transactions !== undefined || plan.rpc.traces !== undefined || plan.rpc.logSources.length > 0 || plan.rpc.absenceSources.length > 0) {
    const rpcPerSecond = plan.rpc.callsPerDay / 86_400;
    const what =
      [plan.rpc.transactions ? "transactions" : "", plan.rpc.traces ? "traces" : "", plan.rpc.logSources.length > 0 ? "logs" : "", plan.rpc.balanceWatches.length > 0 ? "balances" : "", plan.rpc.absenceSources.length > 0 ? "block times" : ""].filter(Boolean).join(" and ") || "nothing on a schedule";
    lines.push("", `JSON-RPC at ${new URL(config.chain.rpc_url).host} (no explorer credits): ${n(plan.rpc.callsPerDay)} calls a day for ${what} (${rpcPerSecond.toFixed(2)} a second on average; chain.requests_per_second: ${config.chain.requests_per_second || "no limit"}), ${plan.rpc.startupCalls} at start-up for token decimals and symbols`);
    const tx = plan.rpc.transactions;
    if (tx !== undefined) {
      const watches = tx.watches.length === 1 ? `watch ${tx.watches[0]}` : `${n(tx.watches.length)} account watches`;
      lines.push(`  transactions (${tx.schedule}): ${n(tx.blockReadsPerDay)} block reads a day (kaia_getBlockReceipts, one per block), shared by ${watches}: ${n(tx.callsPerDay)} calls`);
    }
    const traces = plan.rpc.traces;
    if (traces !== undefined) {
      const watches = traces.watches.length === 1 ? `watch ${traces.watches[0]}` : `${n(traces.watches.length)} watches`;
      lines.push(`  internal transactions (${traces.schedule}): ${n(traces.traceReadsPerDay)} traces a day (debug_traceBlockByNumber, one per block) and as many block times (eth_getBlockByNumber), shared by ${watches}: ${n(traces.callsPerDay)} calls`);
    }
    for (const l of plan.rpc.logSources) {
      const watches = l.watches.length === 1 ? `watch ${l.watches[0]}` : `${n(l.watches.length)} watches`;
      lines.push(`  ${l.family === "event_logs" ? "event logs" : "NFT transfers"} (${l.schedule}): ${n(l.queriesPerDay)} log queries a day (eth_getLogs, ${n(l.queriesPerWindow)} a window: one per filter and per chain.max_request_bytes of its addresses and topics), shared by ${watches}: ${n(l.callsPerDay)} calls${l.family === "nft_transfers" ? ", and a block time (eth_getBlockByNumber) per block with a transfer" : ""}`);
    }
    for (const w of plan.rpc.balanceWatches) lines.push(`  watch ${w.watch}: ${n(w.readingsPerDay)} readings a day (${w.schedule}) × ${w.callsPerReading} calls = ${n(w.callsPerDay)} calls`);
    for (const a of plan.rpc.absenceSources) lines.push(`  absence ${a.rules.join(", ")} (${a.schedule}): the block time of each window's end (eth_getBlockByNumber): ${n(a.callsPerDay)} calls, and one per matching block kept`);
    const limit = config.chain.requests_per_second;
    if (limit > 0 && rpcPerSecond > limit) lines.push(`  ! ${rpcPerSecond.toFixed(2)} calls a second on average exceed chain.requests_per_second (${limit}): the node reads fall behind the chain`);
  }
  if (plan.enrichments.length > 0) {
    lines.push("", "enrichments (per distinct lookup not in the cache; not in the total):");
    for (const e of plan.enrichments) lines.push(`  rule ${e.rule}: ${e.kind} → ${e.operations.join(" + ")}: ${e.creditsPerLookup} credits a lookup`);
  }
  const windowed = plan.sources.filter((s) => s.operation !== "blockInternalTransactions");
  lines.push("", `assumes one page per window (page_size ${config.explorer.page_size} records); a busier window costs the operation again per extra page.`);
  if (windowed.length > 0) {
    lines.push(`records a block that fit in one page at each source's window: ${windowed.map((s) => `${s.watch} ${n(s.recordsPerBlockInOnePage)}`).join(", ")}`);
  }
  const shared = plan.choices.filter((c) => c.rejected.length > 0);
  if (shared.length > 0) {
    lines.push("", "choices (the cheapest operations that see every record each rule needs):");
    for (const choice of shared) {
      const saving = choice.own.creditsPerDay - choice.chosen.creditsPerDay;
      lines.push(`  watches ${choice.watches.join(", ")}: ${n(choice.chosen.creditsPerDay)} credits/day${saving > 0 ? `, ${n(saving)} less than one source per watch (${n(choice.own.creditsPerDay)})` : ""}`);
      for (const source of choice.chosen.sources) lines.push(`    chosen: ${source}`);
      for (const alternative of choice.rejected) {
        lines.push(`    rejected (${n(alternative.creditsPerDay)} credits/day, ${n(alternative.requestsPerDay)} requests/day): ${alternative.rejected ?? ""}`);
        for (const source of alternative.sources) lines.push(`      ${source}`);
      }
      if (choice.omitted > 0) lines.push(`    (${n(choice.omitted)} more alternatives rejected, none cheaper than those above)`);
    }
  }
  if (choices !== undefined && choices.length > 0) {
    const families = config.chain.traces ? "the log families of contract, collection and account watches, and with chain.traces the internal transactions of account and every_block watches" : "the log families of contract, collection and account watches";
    lines.push("", `source choices (${families}; \`source:\` per watch or defaults.source):`);
    const rows = [["source", "credits/day", "explorer requests/day", "node requests/day"]];
    for (const c of choices) rows.push([`${c.source}${c.current ? " (this config)" : ""}`, n(c.creditsPerDay), n(c.explorerRequestsPerDay), n(c.nodeRequestsPerDay)]);
    lines.push(...table(rows, 1).map((line) => `  ${line}`));
  }
  if (plan.warnings.length > 0) {
    lines.push("", "warnings:");
    for (const w of plan.warnings) lines.push(`  ! ${w.message}`);
  }
  return `${lines.join("\n")}\n`;
}

function parseDay(text: string | undefined): number {
  if (text === undefined) return Date.now();
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) throw new UsageError(`--date must be a day as YYYY-MM-DD, not "${text}"`);
  return ms;
}

export const planCommand: Command = {
  help: HELP,
  async run(args: string[], io: CommandIO): Promise<number> {
    let values: { config?: string; date?: string; json?: boolean; wide?: boolean };
    let dayMs: number;
    try {
      values = parseCommandArgs(args, OPTIONS).values;
      dayMs = parseDay(values.date);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.stderr.write(`kaiawatch plan: ${error.message}\n`);
      return EXIT_USAGE;
    }
    const path = values.config ?? "./config.yaml";
    const loaded = await loadConfigForCommand(io, path);
    if (typeof loaded === "number") return loaded;
    const plan = planCredits(loaded.config, { dayMs, compiled: loaded.compiled });
    const choices = planSourceChoices(loaded.config, { dayMs, compiled: loaded.compiled });
    io.stdout.write(values.json ? `${JSON.stringify({ ...plan, sourceChoices: choices }, null, 2)}\n` : formatPlan(plan, loaded.config, path, { wide: values.wide, choices }));
    return EXIT_OK;
  },
};
