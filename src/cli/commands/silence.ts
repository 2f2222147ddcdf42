import { existsSync } from "node:fs";
import type { Common } from "../../common/common.js";
import { formatDuration, parseDuration, type Config } from "../../config/index.js";
import { cleanLine } from "../../common/sanitize-text.js";
import {
  emptySilenceSet,
  isActive,
  mergeSilenceSets,
  newSilence,
  readSilenceFile,
  readStoredSilences,
  silenceFileOf,
  updateSilenceFile,
  type Silence,
  type SilenceSet,
} from "../../notify/silences.js";
import { openStore } from "../../store/open-store.js";
import { storeOptionsOf } from "../../config/store-options.js";
import { PostgresStore } from "../../store/postgres/postgres-store.js";
import { recordFieldExists, recordFieldNames } from "../../notify/record-fields.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, createCommandCommon, loadConfigForCommand, parseCommandArgs, ruleNamed } from "../bootstrap.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";
import { daemonApiOf, describeApiFailure } from "../daemon-api.js";
import type { SilenceChange } from "../../status/silence-body.js";

/** How long `add` and `remove` wait for a running daemon to confirm that it applied the change. */
const CONFIRM_TIMEOUT_MS = 5_000;

const HELP = `Usage:
  kaiawatch silence add --rule NAME [--match FIELD=VALUE …] --for DURATION --reason TEXT
  kaiawatch silence list [--json]
  kaiawatch silence remove ID

A silence holds back a rule's alerts for a while without editing the config: alerts it
matches are recorded in the outbox as not sent (counted in
kaiawatch_alerts_suppressed_total{reason="silence"}) and are not sent later either. It ends
by itself after --for, or with \`silence remove\`.

--match narrows it to alerts whose record has FIELD equal to VALUE (case-insensitive),
FIELD read like group.by: a dot path into the explorer record (from, to,
contract.contract_address, token_id, transaction_hash …). Several --match must all hold;
without one, every alert of the rule is held back.

A running daemon (it holds the store's lock) takes the change through its status API, like
outbox retry and cursors --set (with status.token, or the token the daemon keeps in
status.write_token_file: run it as the daemon's user), applies it at once and logs it. When its API cannot be reached (status.listen false
or port 0), the command writes the change to a file beside the store (STORE.silences.json),
which the daemon merges into its store within a second, and waits (up to ${CONFIRM_TIMEOUT_MS / 1000} s) to see
it there. A stopped daemon applies the file when it starts.

With store.url (PostgreSQL shared by replicas) the command writes the silence into the
database itself (the URL is never printed): every replica reads the silences there at each
delivery round, so it holds from the next alert any replica admits.

Options:
  --rule NAME          (add) the rule to silence
  --match FIELD=VALUE  (add) only alerts whose record field has this value; repeatable
  --for DURATION       (add) how long, e.g. 30m, 2h, 1d
  --reason TEXT        (add) why, for whoever finds the silence later
  --json               (list) one JSON object per line
${CONFIG_OPTIONS_HELP}
`;

export const silenceCommand: Command = {
  name: "silence",
  summary: "hold back a rule's alerts for a while: silence add, list, remove",
  help: HELP,
  run,
};

interface Context {
  io: CommandIO;
  config: Config;
  common: Common;
  file: string;
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...CONFIG_OPTIONS,
      rule: { type: "string" },
      match: { type: "string", multiple: true },
      for: { type: "string" },
      reason: { type: "string" },
      json: { type: "boolean", default: false },
    },
    true,
  );
  const [action, ...rest] = positionals;
  if (action !== "add" && action !== "list" && action !== "remove") throw new UsageError(action === undefined ? "say add, list or remove" : `unknown action "${cleanLine(action, 40)}": add, list or remove`);
  const loaded = await loadConfigForCommand(io, values.config);
  if (typeof loaded === "number") return loaded;
  const { config } = loaded;
  const common = createCommandCommon(io, { config, secrets: loaded.secrets, logLevel: values["log-level"] ?? "warn", logFormat: values["log-format"] });
  const context: Context = { io, config, common, file: silenceFileOf(config.store.path) };

  switch (action) {
    case "add": {
      if (rest.length > 0) throw new UsageError(`add takes no arguments besides its options, got "${cleanLine(rest.join(" "), 80)}"`);
      const rule = values.rule;
      if (rule === undefined) throw new UsageError("add needs --rule NAME");
      const family = ruleNamed(config, rule).source;
      if (values.for === undefined) throw new UsageError("add needs --for DURATION (e.g. 2h): a silence always ends by itself");
      let forMs: number;
      try {
        forMs = parseDuration(values.for);
      } catch (error) {
        throw new UsageError(`--for: ${(error as Error).message}`);
      }
      if (forMs <= 0) throw new UsageError("--for must be longer than 0s");
      const reason = values.reason?.trim();
      if (!reason) throw new UsageError('add needs --reason "…": whoever finds the silence later should know why');
      const match = parseMatchers(values.match ?? []);
      // A field the rule's records do not have would never match (or, reading "", match all of them without it).
      for (const field of Object.keys(match)) {
        if (!recordFieldExists(family, field)) {
          throw new UsageError(`--match: ${family} records (the source of rule ${rule}) have no field "${cleanLine(field, 80)}"; their fields: ${recordFieldNames(family).join(", ")} (nested with a dot, e.g. contract.contract_address; list items by index, e.g. topics.1)`);
        }
      }
      return add(context, newSilence({ rule, match, forMs, reason, now: common.now() }));
    }
    case "list":
      if (rest.length > 0) throw new UsageError("list takes no arguments");
      return list(context, values.json);
    case "remove":
      if (rest.length !== 1) throw new UsageError("remove takes one silence id (see `kaiawatch silence list`)");
      return remove(context, rest[0]!);
  }
}

function parseMatchers(texts: readonly string[]): Record<string, string> {
  const match: Record<string, string> = {};
  for (const text of texts) {
    const at = text.indexOf("=");
    const field = text.slice(0, at).trim();
    const value = text.slice(at + 1).trim();
    if (at <= 0 || field === "" || value === "") throw new UsageError(`--match takes FIELD=VALUE, got "${cleanLine(text, 80)}"`);
    if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(field)) throw new UsageError(`--match: "${cleanLine(field, 80)}" is not a record field (a dot path such as to or contract.contract_address)`);
    if (Object.hasOwn(match, field) && match[field] !== value) throw new UsageError(`--match names ${field} twice with different values; a record field has one value`);
    match[field] = value;
  }
  return match;
}

/** With store.url: the PostgreSQL store the replicas share (writable unless `readOnly`), closed after `fn`. */
async function withSharedStore<T>(context: Context, readOnly: boolean, fn: (store: PostgresStore) => Promise<T>): Promise<T> {
  const store = await openStore(context.common, { ...storeOptionsOf(context.config.store), readOnly });
  try {
    if (!(store instanceof PostgresStore)) throw new Error("store.url opens the PostgreSQL store");
    return await fn(store);
  } finally {
    await store.close();
  }
}

const SHARED_APPLIED = "Every replica applies it from its next delivery round (they read the silences from the shared store).\n";

async function add(context: Context, silence: Silence): Promise<number> {
  const { io, common, file } = context;
  if (context.config.store.url !== undefined) {
    await withSharedStore(context, false, (store) => store.silences.add(silence));
    io.stdout.write(`Silence ${silence.id} added: ${describe(silence)}\n${SHARED_APPLIED}`);
    return EXIT_OK;
  }
  const live = await throughDaemon(context, { add: silence });
  if (live !== undefined) {
    if (live.ok) io.stdout.write(`Silence ${silence.id} added by the running daemon (${live.url}): ${describe(silence)}\n`);
    return live.ok ? EXIT_OK : EXIT_RUNTIME;
  }
  await updateSilenceFile(file, (set) => ({ ...set, silences: [...set.silences, silence] }), common.now());
  io.stdout.write(`Silence ${silence.id} added: ${describe(silence)}\n`);
  const confirmed = await confirm(context, (stored) => stored.silences.some((s) => s.id === silence.id));
  io.stdout.write(confirmationText(confirmed));
  return EXIT_OK;
}

async function remove(context: Context, id: string): Promise<number> {
  const { io, common, file } = context;
  const now = common.now();
  if (context.config.store.url !== undefined) {
    const removed = await withSharedStore(context, false, (store) => store.silences.remove(id, now));
    if (removed === undefined) {
      io.stderr.write(`kaiawatch silence: no active silence "${cleanLine(id, 40)}" (see \`kaiawatch silence list\`; an expired silence is already gone)\n`);
      return EXIT_RUNTIME;
    }
    io.stdout.write(`Silence ${id} removed: ${describe(removed)}\n${SHARED_APPLIED}`);
    return EXIT_OK;
  }
  const known = (await currentSilences(context)).set.silences.find((s) => s.id === id);
  if (known === undefined) {
    io.stderr.write(`kaiawatch silence: no active silence "${cleanLine(id, 40)}" (see \`kaiawatch silence list\`; an expired silence is already gone)\n`);
    return EXIT_RUNTIME;
  }
  const live = await throughDaemon(context, { remove: id });
  if (live !== undefined) {
    if (live.ok) io.stdout.write(`Silence ${id} removed by the running daemon (${live.url}): ${describe(known)}\n`);
    return live.ok ? EXIT_OK : EXIT_RUNTIME;
  }
  // A removal is a tombstone kept until the silence would have ended: every copy of the silence yields to it.
  await updateSilenceFile(file, (set) => ({ ...set, removed: { ...set.removed, [id]: known.expires_at } }), now);
  io.stdout.write(`Silence ${id} removed: ${describe(known)}\n`);
  const confirmed = await confirm(context, (stored) => !stored.silences.some((s) => s.id === id));
  io.stdout.write(confirmationText(confirmed));
  return EXIT_OK;
}

async function list(context: Context, json: boolean): Promise<number> {
  const { io, common } = context;
  const now = common.now();
  const { set, suppressed } = await currentSilences(context);
  const active = set.silences.filter((s) => isActive(s, now));
  if (json) {
    for (const silence of active) io.stdout.write(`${JSON.stringify({ ...silence, suppressed: suppressed[silence.id] ?? 0 })}\n`);
    return EXIT_OK;
  }
  if (active.length === 0) {
    io.stdout.write("No active silences.\n");
    return EXIT_OK;
  }
  const rows = active.map((s) => [s.id, s.rule, matchText(s), `${s.expires_at} (in ${formatDuration(Math.max(0, Math.ceil((Date.parse(s.expires_at) - now) / 1000)) * 1000)})`, String(suppressed[s.id] ?? 0), cleanLine(s.reason, 200)]);
  io.stdout.write(table(["ID", "RULE", "MATCH", "EXPIRES", "HELD BACK", "REASON"], rows));
  return EXIT_OK;
}

/**
 * A running daemon holds the store's lock: the change goes through its status API, which
 * applies and logs it. Undefined when no daemon runs or its API cannot be reached (status.listen
 * false or port 0, or nothing answers: a lock left behind): then the side file carries it.
 */
async function throughDaemon(context: Context, change: SilenceChange): Promise<{ ok: boolean; url: string } | undefined> {
  const { io, config, common } = context;
  if (!existsSync(`${config.store.path}.lock`)) return undefined;
  const api = daemonApiOf(config);
  if ("unavailable" in api) return undefined;
  let outcome: { status: number; body: Record<string, unknown> };
  try {
    outcome = await api.post("/api/silences", change, io.signal);
  } catch {
    return undefined;
  }
  if (outcome.status !== 200) io.stderr.write(`kaiawatch silence: ${common.secrets.redact(describeApiFailure(api, outcome))}\n`);
  return { ok: outcome.status === 200, url: api.url };
}

/**
 * What the store holds (what a daemon applied) merged with the side file (what it may not
 * have read yet); with store.url, what the shared store holds (no side file).
 */
async function currentSilences(context: Context): Promise<{ set: SilenceSet; suppressed: Record<string, number> }> {
  if (context.config.store.url !== undefined) {
    const stored = await withSharedStore(context, true, (store) => store.silences.active(context.common.now()));
    return {
      set: { silences: stored.map(({ suppressed: _suppressed, ...silence }) => silence), removed: {} },
      suppressed: Object.fromEntries(stored.map((s) => [s.id, s.suppressed])),
    };
  }
  const stored = await readStore(context);
  const fromFile = await readSilenceFile(context.file);
  return { set: mergeSilenceSets([stored.set, fromFile], context.common.now()), suppressed: stored.suppressed };
}

async function readStore(context: Context): ReturnType<typeof readStoredSilences> {
  const path = context.config.store.path;
  if (!existsSync(path)) return { set: emptySilenceSet(), suppressed: {} };
  const store = await openStore(context.common, { path, readOnly: true });
  try {
    return await readStoredSilences(store);
  } finally {
    await store.close();
  }
}

/**
 * Waits until the store shows the change, which only a running daemon makes (it merges the
 * side file into its store); "no daemon" when no process holds the store's lock.
 */
async function confirm(context: Context, done: (stored: SilenceSet) => boolean): Promise<"applied" | "no-daemon" | "timeout"> {
  const lock = `${context.config.store.path}.lock`;
  const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
  while (existsSync(lock)) {
    if (done((await readStore(context)).set)) return "applied";
    if (Date.now() > deadline || context.io.signal.aborted) return "timeout";
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return "no-daemon";
}

function confirmationText(outcome: "applied" | "no-daemon" | "timeout"): string {
  switch (outcome) {
    case "applied":
      return "The running daemon has applied it.\n";
    case "no-daemon":
      return "No daemon is running on this store: it applies the change when it starts.\n";
    case "timeout":
      return `The daemon did not confirm within ${CONFIRM_TIMEOUT_MS / 1000} s; it applies the change at its next look at ${"the silence file"} (check with \`kaiawatch silence list\`).\n`;
  }
}

function matchText(silence: Silence): string {
  const parts = Object.entries(silence.match).map(([field, value]) => `${field}=${value}`);
  return parts.length === 0 ? "(every alert)" : cleanLine(parts.join(" "), 200);
}

function describe(silence: Silence): string {
  return `rule ${silence.rule}, ${matchText(silence)}, until ${silence.expires_at}; reason: ${cleanLine(silence.reason, 200)}`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
  return `${[header, ...rows].map(line).join("\n")}\n`;
}
