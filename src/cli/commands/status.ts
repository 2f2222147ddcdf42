import type { Command, CommandIO } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME } from "../command.js";
import { CONFIG_OPTIONS, loadConfigForCommand, parseCommandArgs, UsageError } from "../bootstrap.js";
import { statusUrlOf } from "../daemon-api.js";
import { formatDuration } from "../../common/duration.js";
import { cleanLine } from "../../common/sanitize-text.js";

/** How long one daemon may take to answer /status before it counts as unreachable. */
const STATUS_TIMEOUT_MS = 10_000;

const HELP = `Usage: kaiawatch status [--config PATH] [--url URL …] [--json]

Asks running daemons how they are, as amtool asks Alertmanager: reads each one's /status
(status.listen) and prints its readiness and why, its sources (state, lag behind the head,
the replica holding each, its last tick, and under them each source's last error), its balance watches (holder, last reading, rules
firing), its sinks (waiting, retrying, dead), kaiawatch's own operational conditions firing
now, and the credit day (spent, budget, left).

Without --url it asks the daemon of the config (status.listen; status.token when set).
With PostgreSQL replicas name each replica's status address with --url: every one is
asked, and the command is ready only when every one is.

Exit codes: 0 every daemon asked is ready; 1 one is not ready or cannot be reached;
2 a bad config or usage.

Options:
  --url URL            a daemon's status address (http://host:port); repeat for replicas
  --json               one JSON object: {"ready", "daemons": [{"url", "ready", "error"?, "status"?}]}
  -c, --config PATH    the config file (default ./config.yaml): the address and status.token
                       when --url is not given, status.token with --url when given
`;

/** What the command reads of /status (src/status/daemon-status.ts). */
export interface StatusBody {
  ready: boolean;
  reasons: string[];
  uptime_seconds: number;
  head: { block: number | null };
  health: { worst: string; conditions: Array<{ key: string; kind: string; summary: string }> };
  sources: Array<{ key: string; watch: string; watches?: string[]; state: string | null; lag: number | null; holder?: string | null; held_here?: boolean; last_tick_at: string | null; running: boolean; last_error: string | null }>;
  sinks: Record<string, { type: string; pending: number; retrying: number; dead: number; holder?: string | null; last_error: string | null }>;
  balance_watches?: Array<{ watch: string; holder: string | null; last_read: { block: number; at: string } | null; rules: Array<{ rule: string; state: string }> }>;
  replica?: string | null;
  replicas?: Array<{ id: string }>;
  /** Absent while the store has not answered since the daemon started (src/status/unanswered-status.ts). */
  credits?: { day: string; spent_today: number; budget: number | null; remaining_today: number | null; paused_until: string | null };
  now: string;
}

export interface Answer {
  url: string;
  ready: boolean;
  error?: string;
  status?: StatusBody;
}

async function ask(url: string, token: string | undefined, signal: AbortSignal): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  try {
    const response = await fetch(`${url.replace(/\/+$/, "")}/status`, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(STATUS_TIMEOUT_MS)]) });
    const text = await response.text();
    if (response.status !== 200) return { url, ready: false, error: `/status answered ${response.status}: ${cleanLine(text, 200)}` };
    const status = JSON.parse(text) as StatusBody;
    return { url, ready: status.ready === true, status };
  } catch (error) {
    return { url, ready: false, error: `cannot reach ${url}/status: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, { ...CONFIG_OPTIONS, url: { type: "string", multiple: true }, json: { type: "boolean", default: false } });
  const urls = values.url ?? [];
  for (const url of urls) if (!/^https?:\/\/[^/]+\/?$/i.test(url)) throw new UsageError(`--url takes a daemon's status address such as http://127.0.0.1:9464, got "${cleanLine(url, 100)}"`);
  let token: string | undefined;
  // The config gives the address and the token; with --url only the token, and only when named.
  if (urls.length === 0 || args.some((a) => a === "-c" || a === "--config" || a.startsWith("--config="))) {
    const loaded = await loadConfigForCommand(io, values.config);
    if (typeof loaded === "number") return loaded;
    token = loaded.config.status.token;
    if (urls.length === 0) {
      const url = statusUrlOf(loaded.config);
      if ("unavailable" in url) {
        io.stderr.write(`kaiawatch status: ${url.unavailable}; name the daemon with --url\n`);
        return EXIT_RUNTIME;
      }
      urls.push(url.url);
    }
  }
  const answers = await Promise.all(urls.map((url) => ask(url, token, io.signal)));
  const ready = answers.every((a) => a.ready);
  if (values.json) io.stdout.write(`${JSON.stringify({ ready, daemons: answers })}\n`);
  else io.stdout.write(answers.map(describe).join("\n"));
  return ready ? EXIT_OK : EXIT_RUNTIME;
}

/** One daemon's answer as text: a headline, why it is not ready, then its tables. */
export function describe(answer: Answer): string {
  const out: string[] = [];
  const s = answer.status;
  if (s === undefined) return `${answer.url}: UNREACHABLE: ${answer.error}\n`;
  const replica = s.replica ? ` · replica ${s.replica} (${s.replicas?.length ?? 0} live)` : "";
  out.push(`${answer.url}: ${s.ready ? "ready" : "NOT READY"} · up ${formatDuration(s.uptime_seconds * 1000)} · head ${s.head.block ?? "unknown"}${replica}`);
  for (const reason of s.reasons) out.push(`  not ready: ${reason}`);
  const now = Date.parse(s.now);
  const ago = (iso: string | null) => (iso === null ? "never" : `${formatDuration(Math.max(0, Math.round((now - Date.parse(iso)) / 1000)) * 1000)} ago`);
  const holder = (h: string | null | undefined, here?: boolean) => (h === undefined || (h === null && s.replicas === undefined) ? "-" : h === null ? "none" : here ? `${h} (here)` : h);
  out.push("");
  out.push(
    ...table(
      ["SOURCE", "WATCH", "STATE", "LAG", "HOLDER", "LAST TICK"],
      s.sources.map((src) => [src.key, (src.watches ?? [src.watch]).join(", "), `${src.state ?? "-"}${src.running ? ", running" : ""}`, src.lag === null ? "-" : String(src.lag), holder(src.holder, src.held_here && src.holder !== null), ago(src.last_tick_at)]),
    ),
  );
  // A source's last error on a line of its own, whole: it names the setting to change (a refused key).
  for (const src of s.sources) if (src.last_error !== null) out.push(`  last error of ${src.key} (${src.watch}): ${cleanLine(src.last_error, 400)}`);
  const balances = s.balance_watches ?? [];
  if (balances.length > 0) {
    out.push("");
    out.push(
      ...table(
        ["BALANCE WATCH", "HOLDER", "LAST READ", "RULES FIRING"],
        balances.map((b) => [b.watch, holder(b.holder), b.last_read === null ? "never" : `block ${b.last_read.block}, ${ago(b.last_read.at)}`, b.rules.filter((r) => r.state === "firing").map((r) => r.rule).join(", ") || "none"]),
      ),
    );
  }
  out.push("");
  out.push(...table(["SINK", "TYPE", "PENDING", "RETRYING", "DEAD", "HOLDER", "LAST ERROR"], Object.entries(s.sinks).map(([name, sink]) => [name, sink.type, String(sink.pending), String(sink.retrying), String(sink.dead), holder(sink.holder), cleanLine(sink.last_error ?? "-", 60)])));
  out.push("");
  if (s.health.conditions.length === 0) out.push("Conditions: none firing");
  else for (const c of s.health.conditions) out.push(`Condition firing: ${c.kind}: ${cleanLine(c.summary, 160)}`);
  const c = s.credits;
  if (c === undefined) out.push("Credits: unknown (the store has not answered since the daemon started)");
  else out.push(`Credits ${c.day}: ${c.spent_today} spent${c.budget === null ? " (no daily budget)" : ` of ${c.budget}, ${c.remaining_today} left`}${c.paused_until ? `; polling paused until ${c.paused_until}` : ""}`);
  return `${out.join("\n")}\n`;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  return [header, ...rows].map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}`);
}

export const statusCommand: Command = { help: HELP, run };
