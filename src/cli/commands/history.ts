import { describeError } from "../../common/errors.js";
import { parseDuration } from "../../common/duration.js";
import { cleanLine } from "../../common/sanitize-text.js";
import type { Config } from "../../config/index.js";
import { storeOptionsOf } from "../../config/store-options.js";
import { isStoreError } from "../../store/errors.js";
import { openBackend, type OpenBackendOptions } from "../../store/open-backend.js";
import type { DeliveryAttempt } from "../../store/types.js";
import { ATTEMPT_OUTCOMES } from "../../model/attempt-outcome.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, createCommandCommon, loadConfigForCommand, parseCommandArgs, UsageError } from "../bootstrap.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";
import { statusUrlOf } from "../daemon-api.js";
// One reading of the filter with the status API; its bound: a larger --limit reads the store directly.
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, readHistoryFilter, type HistoryFilter } from "../../status/history-query.js";
import { printableCell, table } from "../text-table.js";

/** How long the running daemon may take to answer before the command says so. */
const API_TIMEOUT_MS = 10_000;
/** The error column is cut to this many characters (--json carries the stored text, itself capped). */
const ERROR_WIDTH = 80;

const HELP = `Usage: kaiawatch history [--config PATH | --store PATH] [--alert ID] [--sink NAME] [--rule NAME]
                         [--outcome delivered|failed|dead|suppressed] [--since TIME] [--until TIME]
                         [--limit N] [--json]

Every delivery attempt kept in the store (for store.retention, 7 days by default): when, which
alert to which sink, the attempt's number, what came of it (delivered; failed, to be retried;
dead, a dead letter; suppressed, held back by a silence, an inhibit rule or a cooldown), the
receiver's HTTP status code, how long the send took, and the error (for suppressed, which
hold). The newest N that match are shown, oldest first.

While the daemon of the config runs, the command asks it through its status API
(status.listen, with status.token when set); otherwise it reads the store itself (store.path,
or the PostgreSQL store.url shared by replicas; the URL is never printed).

Options:
  --alert ID        only this alert's attempts (its id, as in kaiawatch outbox and the webhook-id)
  --sink NAME       only attempts of this sink
  --rule NAME       only attempts of this rule's alerts
  --outcome WHAT    only delivered, failed, dead or suppressed attempts
  --since TIME      only attempts at or after TIME: an ISO-8601 time (2025-01-01T00:00:00Z)
                    or a duration back from now (30m, 2h, 7d)
  --until TIME      only attempts at or before TIME (the same forms)
  --limit N         the newest N attempts (default ${HISTORY_DEFAULT_LIMIT})
  --json            one JSON object per attempt and line instead of a table
  --store PATH      read this store file, instead of the config's store
${CONFIG_OPTIONS_HELP}
`;

export const historyCommand: Command = { help: HELP, run };

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...CONFIG_OPTIONS,
    store: { type: "string" },
    alert: { type: "string" },
    sink: { type: "string" },
    rule: { type: "string" },
    outcome: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean", default: false },
  });
  const filter = filterOf(values, Date.now());

  let config: Config | undefined;
  let secrets: string[] = [];
  let open: OpenBackendOptions;
  if (values.store !== undefined) {
    open = { path: values.store, mustExist: true, readOnly: true };
  } else {
    const loaded = await loadConfigForCommand(io, values.config);
    if (typeof loaded === "number") return loaded;
    config = loaded.config;
    secrets = loaded.secrets;
    open = { ...storeOptionsOf(config.store), mustExist: true, readOnly: true };
  }
  const common = createCommandCommon(io, { config, secrets, logLevel: values["log-level"] ?? "warn", logFormat: values["log-format"] });
  const redact = (text: string) => common.secrets.redact(text);

  let attempts: DeliveryAttempt[];
  let from: string;
  const daemon = config === undefined ? undefined : await askDaemon(config, filter, io.signal);
  if (daemon !== undefined && "error" in daemon) {
    io.stderr.write(`kaiawatch history: ${redact(daemon.error)}\n`);
    return EXIT_RUNTIME;
  }
  if (daemon !== undefined) {
    attempts = daemon.attempts;
    from = `the running daemon at ${daemon.url}`;
  } else {
    try {
      const backend = await openBackend(common, open);
      try {
        attempts = await backend.store.listAttempts(filter);
      } finally {
        await backend.close();
      }
      from = open.url !== undefined ? "the PostgreSQL store" : `the store ${open.path}`;
    } catch (error) {
      if (isStoreError(error, "KW_STORE_MISSING")) {
        io.stdout.write(`No store at ${open.path} yet: kaiawatch has not run with this store, so there is no delivery history.\n`);
        return EXIT_OK;
      }
      io.stderr.write(`kaiawatch history: ${redact(describeError(error))}\n`);
      return EXIT_RUNTIME;
    }
  }

  // Newest first from the store; shown oldest first, as a log reads.
  const shown = [...attempts].reverse();
  if (values.json) {
    for (const attempt of shown) io.stdout.write(`${redact(JSON.stringify(attempt))}\n`);
    return EXIT_OK;
  }
  if (shown.length === 0) {
    io.stdout.write(`No delivery attempt matches in ${from}.\n`);
    return EXIT_OK;
  }
  const rows = shown.map((a) => [a.at, a.alert_id, a.sink, a.rule, String(a.attempt), a.outcome, a.status === undefined ? "-" : String(a.status), a.latency_ms === undefined ? "-" : `${a.latency_ms} ms`, a.error === undefined ? "" : cleanLine(redact(a.error), ERROR_WIDTH)].map(printableCell));
  io.stdout.write(table(["TIME", "ALERT", "SINK", "RULE", "ATTEMPT", "OUTCOME", "STATUS", "LATENCY", "ERROR"], rows));
  const cut = shown.length === filter.limit ? ` (the newest ${filter.limit}; --limit N shows more)` : "";
  io.stdout.write(`\n${shown.length} ${shown.length === 1 ? "attempt" : "attempts"}${cut}, read from ${from}\n`);
  return EXIT_OK;
}

/** The store filter of the options, read as the status API reads its query; a bad value is a usage error (exit 2). */
function filterOf(values: Record<string, string | boolean | undefined>, now: number): HistoryFilter {
  const read = readHistoryFilter({
    value: (key) => (typeof values[key] === "string" && values[key] !== "" ? (values[key] as string) : undefined),
    time: (value) => timeOf(value, now),
    maxLimit: Number.POSITIVE_INFINITY,
  });
  if ("bad" in read) {
    const { key, value } = read.bad;
    if (key === "outcome") throw new UsageError(`--outcome must be one of ${ATTEMPT_OUTCOMES.join(", ")}, not "${cleanLine(value, 40)}"`);
    if (key === "limit") throw new UsageError(`--limit must be a whole number ≥ 1, not "${cleanLine(value, 40)}"`);
    throw new UsageError(`--${key} takes an ISO-8601 time (2025-01-01T00:00:00Z) or a duration back from now (30m, 2h, 7d), not "${cleanLine(value, 60)}"`);
  }
  const { filter } = read;
  if (filter.since !== undefined && filter.until !== undefined && filter.since > filter.until) throw new UsageError(`--since (${filter.since}) is after --until (${filter.until})`);
  return filter;
}

/** An ISO-8601 time, or a duration back from `now` (30m, 2h, 7d); undefined when it is neither. */
function timeOf(value: string, now: number): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}(T|$)/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  }
  try {
    return new Date(now - parseDuration(value)).toISOString();
  } catch {
    return undefined;
  }
}

/**
 * The attempts as the running daemon of this config has them (GET /api/history), undefined
 * when no daemon answers there (none runs, or the config gives no status address), or why it
 * refused. A daemon that has no history endpoint (an older build) is read around as well.
 */
async function askDaemon(config: Config, filter: HistoryFilter, signal: AbortSignal): Promise<{ url: string; attempts: DeliveryAttempt[] } | { error: string } | undefined> {
  if (filter.limit > HISTORY_MAX_LIMIT) return undefined;
  const address = statusUrlOf(config);
  if ("unavailable" in address) return undefined;
  const query = new URLSearchParams();
  if (filter.alertId !== undefined) query.set("alert", filter.alertId);
  if (filter.sink !== undefined) query.set("sink", filter.sink);
  if (filter.rule !== undefined) query.set("rule", filter.rule);
  if (filter.outcome !== undefined) query.set("outcome", filter.outcome);
  if (filter.since !== undefined) query.set("since", filter.since);
  if (filter.until !== undefined) query.set("until", filter.until);
  query.set("limit", String(filter.limit));
  const headers: Record<string, string> = { accept: "application/json" };
  if (config.status.token !== undefined) headers.authorization = `Bearer ${config.status.token}`;
  let response: Response;
  try {
    response = await fetch(`${address.url}/api/history?${query.toString()}`, { headers, signal: AbortSignal.any([signal, AbortSignal.timeout(API_TIMEOUT_MS)]) });
  } catch (error) {
    // Nobody listens: no daemon runs with this config, and the store is read directly.
    if (isRefused(error)) return undefined;
    return { error: `the running daemon's status API at ${address.url} did not answer: ${error instanceof Error ? error.message : String(error)}` };
  }
  const text = await response.text();
  if (response.status === 404) return undefined;
  if (response.status === 401) return { error: `the running daemon at ${address.url} needs its status token: set status.token in the config this command reads` };
  if (response.status !== 200) return { error: `the running daemon's status API at ${address.url} answered ${response.status}: ${cleanLine(text, 200)}` };
  const body = JSON.parse(text) as { attempts?: DeliveryAttempt[] };
  return { url: address.url, attempts: Array.isArray(body.attempts) ? body.attempts : [] };
}

function isRefused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e != null && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === "ECONNREFUSED") return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}


