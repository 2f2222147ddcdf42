import { parseArgs } from "node:util";
import type { Common } from "../../common/common.js";
import { describeError } from "../../common/errors.js";
import { createLogger } from "../../common/logger.js";
import { createMetrics } from "../../common/metrics.js";
import { createSecretRedactor } from "../../common/secrets.js";
import { describeConfigFailure, loadConfig, type Config } from "../../config/index.js";
import { daemonApiOf, describeApiFailure } from "../daemon-api.js";
import type { DeadLetterSelector, RequeueResult } from "../../notify/dead-letters.js";
import { readSuppressedNotes, type SuppressedNote } from "../../notify/cooldown.js";
import { requeueDeadLetters } from "../../notify/dead-letters.js";
import { isStoreError } from "../../store/errors.js";
import { openBackend, type OpenBackendOptions } from "../../store/open-backend.js";
import { storeOptionsOf } from "../../config/store-options.js";
import type { OutboxEntry, OutboxState } from "../../model/outbox-entry.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, type Command, type CommandIO } from "../command.js";
import { readRecordField } from "../../notify/grouping.js";
import { routeGroupOf, type RouteGroup } from "../../notify/route-grouping.js";
import { formatDuration } from "../../common/duration.js";
import { printableCell, table } from "../text-table.js";

/** What --state lists: the store's states, and "suppressed" (kept as delivered, never sent: a silence, an inhibit rule or a cooldown held it back). */
type ListedState = OutboxState | "suppressed";
const STATES: readonly ListedState[] = ["pending", "dead", "delivered", "suppressed"];
/** The summary column is cut to this many characters (--json carries it whole). */
const SUMMARY_WIDTH = 48;
const VALUE_OPTIONS = new Set(["--config", "--store", "--state", "--sink", "--limit"]);
const DEFAULT_LIMIT = 100;

const HELP = `Usage:
  kaiawatch outbox [--config PATH] [--state pending|dead|delivered|suppressed] [--sink NAME] [--limit N] [--json]
  kaiawatch outbox retry (ID… | --all) [--config PATH]

List the alerts in the outbox, or send dead letters again.

Listing shows pending and dead alerts unless --state says otherwise (delivered alerts are
kept for store.retention, 7 days by default): the newest ${DEFAULT_LIMIT} of each state, oldest
first, and how many there are in all, each with its alert's summary. A pending alert of a
rule with group: says which digest it waits for (one the routes: tree groups, which group and
route). It only reads the store, so it works while the
daemon runs. With store.url in the config it reads the PostgreSQL store that the replicas
share (the URL is never printed).

retry puts dead letters back into the outbox with their attempts reset; they are sent the
next time kaiawatch runs. An ID names an outbox entry (ALERT_ID:SINK), an alert (all its
sinks) or a digest (grp_…). With the file store retry needs the store's lock: while the
daemon runs, retry asks it through its status API (status.listen, with status.token or
the daemon's token in status.write_token_file). With store.url (the
PostgreSQL store of replicas) retry requeues them in the database directly, and the replica
holding each sink sends them.

Options:
  --config PATH     the config file (default ./config.yaml); its store.url, or else its store.path, is used
  --store PATH      the store (its SQLite file), instead of reading the config
  --state STATE     only entries in this state: pending, dead, delivered (sent and accepted) or
                    suppressed (held back by a silence, an inhibit rule or a cooldown, never sent)
  --sink NAME       only entries of this sink
  --limit N         show the newest N entries of each state (default ${DEFAULT_LIMIT})
  --json            one JSON object per line instead of a table
  --all             (retry) every dead letter
`;

export const outboxCommand: Command = {
  help: HELP,
  async run(args, io) {
    // `retry` may follow options (`outbox --config x.yaml retry 1`), but not as an option's value.
    const at = args.findIndex((arg, i) => arg === "retry" && !VALUE_OPTIONS.has(args[i - 1] ?? ""));
    if (at >= 0) return retry([...args.slice(0, at), ...args.slice(at + 1)], io);
    return list(args, io);
  },
};

function usageError(io: CommandIO, message: string): number {
  io.stderr.write(`kaiawatch outbox: ${message}\nRun \`kaiawatch outbox --help\` for the options.\n`);
  return EXIT_USAGE;
}

type Parsed = { ok: true; values: Record<string, string | boolean | undefined>; positionals: string[] } | { ok: false; code: number };

function parse(args: string[], io: CommandIO, options: Record<string, { type: "string" | "boolean" }>, allowPositionals: boolean): Parsed {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals, strict: true });
    return { ok: true, values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    return { ok: false, code: usageError(io, (error as Error).message) };
  }
}

/**
 * The store from --store (a file), or the config's: its store.url (PostgreSQL shared by
 * replicas, a secret never printed) or its store.path; a file store that does not exist yet is
 * not created (KW_STORE_MISSING).
 */
async function storePath(
  values: Record<string, string | boolean | undefined>,
  io: CommandIO,
): Promise<{ path: string; open: OpenBackendOptions; secrets: string[]; config?: Config } | { code: number }> {
  if (typeof values.store === "string") return { path: values.store, open: { path: values.store, mustExist: true }, secrets: [] };
  const configPath = typeof values.config === "string" ? values.config : "./config.yaml";
  try {
    const loaded = await loadConfig({ path: configPath, env: io.env });
    return { path: loaded.config.store.path, open: { ...storeOptionsOf(loaded.config.store), mustExist: true }, secrets: loaded.secrets, config: loaded.config };
  } catch (error) {
    const text = describeConfigFailure(error);
    if (text === undefined) throw error;
    io.stderr.write(text);
    return { code: EXIT_USAGE };
  }
}

function cliCommon(io: CommandIO, secrets: string[]): Common {
  const redactor = createSecretRedactor();
  for (const secret of secrets) redactor.add(secret);
  // The store only logs what a user should see (a stale lock taken over): warnings, on stderr.
  const logger = createLogger({ level: "warn", pretty: true, redactor, destination: io.stderr });
  return { logger, metrics: createMetrics(), secrets: redactor, signal: io.signal, now: Date.now };
}

async function list(args: string[], io: CommandIO): Promise<number> {
  const parsed = parse(
    args,
    io,
    { config: { type: "string" }, store: { type: "string" }, state: { type: "string" }, sink: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" } },
    false,
  );
  if (!parsed.ok) return parsed.code;
  const { values } = parsed;
  const state = values.state;
  if (state !== undefined && !STATES.includes(state as ListedState)) {
    return usageError(io, `--state must be one of ${STATES.join(", ")}, not "${String(state)}"`);
  }
  const limitText = values.limit;
  if (limitText !== undefined && (typeof limitText !== "string" || !/^[1-9]\d{0,8}$/.test(limitText))) {
    return usageError(io, `--limit must be a whole number ≥ 1, not "${String(limitText)}"`);
  }
  const limit = typeof limitText === "string" ? Number(limitText) : DEFAULT_LIMIT;
  const shownStates: ListedState[] = state === undefined ? ["pending", "dead"] : [state as ListedState];
  const location = await storePath(values, io);
  if ("code" in location) return location.code;
  const common = cliCommon(io, location.secrets);
  let entries: OutboxEntry[];
  let totals: Array<readonly [string, number]>;
  let suppressed: Record<string, SuppressedNote>;
  try {
    const backend = await openBackend(common, { ...location.open, readOnly: true });
    const store = backend.store;
    try {
      const sink = typeof values.sink === "string" ? values.sink : undefined;
      // The newest of each state, shown oldest first: what a long outbox holds last, read without reading all of it.
      entries = [];
      totals = [];
      suppressed = {};
      for (const s of shownStates) {
        if (s !== "delivered" && s !== "suppressed") {
          entries.push(...(await store.listOutbox({ sink, state: s, newestFirst: true, limit })).reverse());
          totals.push([s, await store.countOutbox({ sink, state: s })] as const);
          continue;
        }
        // The store keeps a suppressed alert as delivered (it is done with), with a note of why:
        // each is listed under its own state, and the total counts both.
        const done = (await store.listOutbox({ sink, state: "delivered", newestFirst: true, limit })).reverse();
        Object.assign(suppressed, await readSuppressedNotes(store, done));
        entries.push(...done.filter((entry) => (suppressed[entry.id] !== undefined) === (s === "suppressed")));
        totals.push(["delivered or suppressed", await store.countOutbox({ sink, state: "delivered" })] as const);
      }
      for (const [id, note] of Object.entries(await readSuppressedNotes(store, entries))) suppressed[id] = note;
    } finally {
      await backend.close();
    }
  } catch (error) {
    if (isStoreError(error, "KW_STORE_MISSING")) {
      io.stdout.write(`No store at ${location.path} yet: kaiawatch has not run with this store, so the outbox is empty.\n`);
      return EXIT_OK;
    }
    io.stderr.write(`kaiawatch outbox: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_RUNTIME;
  }

  if (values.json === true) {
    for (const entry of entries) {
      const { alert, ...rest } = entry;
      const line = { ...rest, state: rest.state === "delivered" && suppressed[entry.id] !== undefined ? "suppressed" : rest.state, alert_id: alert.id, summary: alert.summary, suppressed_at: suppressed[entry.id]?.at, suppressed_by: suppressed[entry.id]?.reason };
      io.stdout.write(`${JSON.stringify(line)}\n`);
    }
    return EXIT_OK;
  }
  if (entries.length === 0) {
    const what = state === undefined ? "pending or dead alerts" : `${state} alerts`;
    io.stdout.write(`No ${what}${typeof values.sink === "string" ? ` for sink ${values.sink}` : ""} in the outbox.\n`);
    return EXIT_OK;
  }
  // A silenced or cooled-down alert was never sent: it is "suppressed", not "delivered".
  const shownState = (entry: OutboxEntry) => (entry.state === "delivered" && suppressed[entry.id] !== undefined ? "suppressed" : entry.state);
  const groups = new Map((location.config?.rules ?? []).filter((rule) => rule.group !== undefined).map((rule) => [rule.name, rule.group!]));
  const rules = new Map((location.config?.rules ?? []).map((rule) => [rule.name, rule]));
  const routes = location.config?.routes;
  const rows = entries.map((entry) => [entry.id, entry.sink, entry.rule, shownState(entry), String(entry.attempts), entry.created_at, cutSummary(entry.alert.summary), note(entry, suppressed[entry.id], groups.get(entry.rule), routeGroupOf(routes, rules.get(entry.rule), entry, entry.sink))].map(printableCell));
  io.stdout.write(table(["ID", "SINK", "RULE", "STATE", "ATTEMPTS", "CREATED", "SUMMARY", "LAST ERROR / REASON"], rows));
  const counts = totals.filter(([, n]) => n > 0);
  const cut = entries.length < counts.reduce((sum, [, n]) => sum + n, 0);
  io.stdout.write(`\n${counts.map(([s, n]) => `${n} ${s}`).join(", ")}${cut ? ` (the newest ${limit} of each shown; --limit N shows more)` : ""}\n`);
  return EXIT_OK;
}

function cutSummary(summary: string): string {
  const line = summary.replace(/\s+/g, " ").trim();
  return line.length <= SUMMARY_WIDTH ? line : `${line.slice(0, SUMMARY_WIDTH - 1)}…`;
}

function note(entry: OutboxEntry, suppression: SuppressedNote | undefined, group?: { window: number; by?: string }, routeGroup?: RouteGroup): string {
  // A member waits for its rule's digest: the one it is in, or (not grouped yet) the next of its rule (and group.by value).
  const waiting = entry.state === "pending" && entry.group_id === undefined && entry.attempts === 0;
  const byValue = group?.by === undefined ? "" : `, ${group.by} ${readRecordField(entry.alert.record, group.by) || "(none)"}`;
  const digest =
    entry.group_id !== undefined
      ? ` [digest ${entry.group_id}]`
      : waiting && group !== undefined
        ? ` for the next digest of rule ${entry.rule} (group.window ${formatDuration(group.window)}${byValue})`
        : waiting && routeGroup !== undefined
          ? ` for the next message of its group ${routeGroup.stamp.key} on route ${routeGroup.route.id} (group_wait ${formatDuration(routeGroup.route.groupWaitMs)}, group_interval ${formatDuration(routeGroup.route.groupIntervalMs)})`
          : "";
  switch (entry.state) {
    case "dead":
      return `${entry.dead_reason ?? "dead"}${digest}`;
    case "delivered":
      return suppression !== undefined ? `not sent: suppressed by ${suppression.reason}${digest}` : `delivered ${entry.delivered_at ?? ""}${digest}`;
    case "pending":
      return entry.last_error === undefined ? `waiting${digest}` : `${entry.last_error} (next attempt ${entry.next_attempt_at})${digest}`;
  }
}



async function retry(args: string[], io: CommandIO): Promise<number> {
  const parsed = parse(args, io, { config: { type: "string" }, store: { type: "string" }, all: { type: "boolean" } }, true);
  if (!parsed.ok) return parsed.code;
  const { values, positionals } = parsed;
  const all = values.all === true;
  if (!all && positionals.length === 0) return usageError(io, "retry needs dead letter ids, or --all");
  if (all && positionals.length > 0) return usageError(io, "give either ids or --all, not both");
  const location = await storePath(values, io);
  if ("code" in location) return location.code;
  const common = cliCommon(io, location.secrets);
  const selector: DeadLetterSelector = all ? { all: true } : { ids: positionals };
  const report = (result: RequeueResult, when: string): number => {
    for (const id of result.unmatched) io.stderr.write(`kaiawatch outbox retry: no dead letter matches "${printableCell(id)}"\n`);
    const plural = result.requeued === 1 ? "dead letter" : "dead letters";
    io.stdout.write(result.requeued === 0 ? "Nothing requeued.\n" : `Requeued ${result.requeued} ${plural}; ${when}.\n`);
    return result.unmatched.length > 0 ? EXIT_RUNTIME : EXIT_OK;
  };
  try {
    // PostgreSQL has no lock: the requeue is one transaction, and the replica holding each
    // sink sends its entries at its next pass.
    const backend = await openBackend(common, location.open);
    try {
      const store = backend.store;
      const when = backend.replicas !== undefined ? "the replica holding each sink sends them at its next pass (within a second), or the next kaiawatch to run" : "they are sent the next time kaiawatch runs (run or once)";
      return report(await requeueDeadLetters(store, selector, Date.now()), when);
    } finally {
      await backend.close();
    }
  } catch (error) {
    if (isStoreError(error, "KW_STORE_MISSING")) {
      io.stderr.write(`kaiawatch outbox retry: no store at ${location.path}: there are no dead letters to retry.\n`);
      return EXIT_RUNTIME;
    }
    if (isStoreError(error, "KW_STORE_LOCKED")) {
      if (location.config === undefined) {
        io.stderr.write(`kaiawatch outbox retry: ${error.message}\nA running daemon holds the store: give --config instead of --store so that retry can ask it through its status API.\n`);
        return EXIT_RUNTIME;
      }
      return retryThroughDaemon(io, location.config, selector, report, common.secrets.redact.bind(common.secrets), error.message);
    }
    io.stderr.write(`kaiawatch outbox retry: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_RUNTIME;
  }
}

/** The daemon holds the store: it re-queues them itself, through its status API. */
async function retryThroughDaemon(io: CommandIO, config: Config, selector: DeadLetterSelector, report: (result: RequeueResult, when: string) => number, redact: (text: string) => string, lockMessage: string): Promise<number> {
  const api = daemonApiOf(config);
  if ("unavailable" in api) {
    io.stderr.write(`kaiawatch outbox retry: ${lockMessage}\nThe daemon cannot be asked instead: ${api.unavailable}.\n`);
    return EXIT_RUNTIME;
  }
  let outcome: { status: number; body: Record<string, unknown> } | Error;
  try {
    outcome = await api.post("/api/dead-letters/requeue", selector, io.signal);
  } catch (error) {
    outcome = error instanceof Error ? error : new Error(String(error));
  }
  if (outcome instanceof Error || outcome.status !== 200) {
    io.stderr.write(`kaiawatch outbox retry: ${lockMessage}\nAsked the daemon instead, and ${redact(describeApiFailure(api, outcome))}\n`);
    return EXIT_RUNTIME;
  }
  const body = outcome.body as { requeued?: unknown; unmatched?: unknown };
  const result: RequeueResult = { requeued: Number(body.requeued ?? 0), unmatched: Array.isArray(body.unmatched) ? body.unmatched.map(String) : [] };
  return report(result, `the running daemon (${api.url}) sends them now`);
}
