import type { Common } from "../../common/common.js";
import { formatDuration, parseDuration, type Config } from "../../config/index.js";
import { cleanLine } from "../../common/sanitize-text.js";
import { MatcherError, parseMatchers as parseLabelMatchers, type Matcher } from "../../notify/matchers.js";
import { newSilence, silenceProblem, type Silence } from "../../notify/silences.js";
import type { Backend } from "../../store/backend.js";
import { isStoreError } from "../../store/errors.js";
import { openBackend } from "../../store/open-backend.js";
import type { StoredSilence } from "../../store/silence-store.js";
import { storeOptionsOf } from "../../config/store-options.js";
import { COMPUTED_RULE_FIELDS, RULE_FIELD_ALIASES, recordFieldExists, recordFieldNames } from "../../notify/record-fields.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, parseCommandArgs, ruleNamed, startConfigCommand } from "../bootstrap.js";
import { EXIT_OK, EXIT_RUNTIME, type Command, type CommandIO } from "../command.js";
import { table } from "../text-table.js";

const HELP = `Usage:
  kaiawatch silence add [MATCHER …] [--rule NAME [--match FIELD=VALUE …]] --for DURATION --comment TEXT
  kaiawatch silence list [--json]
  kaiawatch silence remove ID

A silence holds back alerts for a while without editing the config: alerts it matches are
recorded in the outbox as not sent (counted in
kaiawatch_alerts_suppressed_total{reason="silence"}) and are not sent later either. It ends
by itself after --for, or with \`silence remove\`.

MATCHERs are label matchers, as Alertmanager's silences (and amtool's) take them and as
routes use them: 'severity="warning"', 'team=~"nft.*"', 'watch!=treasury', or several in
one '{severity="warning", team="nft"}'. The alert's labels must meet them all (a rule's
alerts carry rule, watch, source, severity and its labels:). At least one must not match
the empty string.

--rule silences one rule's alerts; with --match, only those whose record has FIELD equal
to VALUE (case-insensitive), FIELD read like group.by: a dot path into the explorer record
(from, to, contract.contract_address, token_id, transaction_hash …): the tool for one noisy
counterparty. Several --match must all hold. Matchers, --rule and --match may be combined:
an alert must meet every one.

The command writes the silence into the store itself, whether or not a daemon runs on it:
beside a running daemon on the file store (store.path) on a short connection of its own,
which SQLite's WAL allows next to the daemon's; with store.url into the PostgreSQL database
that the replicas share (the URL is never printed). The daemon, and every replica, reads the
silences from the store at each delivery round, so a silence holds from the next alert
admitted.

Options:
  --rule NAME          (add) only this rule's alerts
  --match FIELD=VALUE  (add, with --rule) only alerts whose record field has this value; repeatable
  --for DURATION       (add) how long, e.g. 30m, 2h, 1d
  --comment TEXT       (add) why, for whoever finds the silence later (also --reason)
  --json               (list) one JSON object per line
${CONFIG_OPTIONS_HELP}
`;

export const silenceCommand: Command = { help: HELP, run };

interface Context {
  io: CommandIO;
  config: Config;
  common: Common;
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
      comment: { type: "string" },
      json: { type: "boolean", default: false },
    },
    true,
  );
  const [action, ...rest] = positionals;
  if (action !== "add" && action !== "list" && action !== "remove") throw new UsageError(action === undefined ? "say add, list or remove" : `unknown action "${cleanLine(action, 40)}": add, list or remove`);
  const loaded = await startConfigCommand(io, values);
  if (typeof loaded === "number") return loaded;
  const { config, common } = loaded;
  const context: Context = { io, config, common };

  switch (action) {
    case "add": {
      const matchers = labelMatchersOf(rest);
      const rule = values.rule;
      if (rule === undefined && values.match !== undefined) throw new UsageError("--match reads a rule's record fields: it needs --rule NAME");
      const family = rule === undefined ? undefined : ruleNamed(config, rule).source;
      const problem = silenceProblem({ ...(rule === undefined ? {} : { rule }), matchers });
      if (problem !== undefined) throw new UsageError(`add: ${problem}`);
      if (values.for === undefined) throw new UsageError("add needs --for DURATION (e.g. 2h): a silence always ends by itself");
      let forMs: number;
      try {
        forMs = parseDuration(values.for);
      } catch (error) {
        throw new UsageError(`--for: ${(error as Error).message}`);
      }
      if (forMs <= 0) throw new UsageError("--for must be longer than 0s");
      const reason = (values.comment ?? values.reason)?.trim();
      if (!reason) throw new UsageError('add needs --comment "…": whoever finds the silence later should know why');
      const match = parseMatchers(values.match ?? []);
      // A field the rule's records do not have would never match (or, reading "", match all of them without it).
      for (const field of Object.keys(match)) {
        if (family !== undefined && !recordFieldExists(family, field)) {
          const computed = COMPUTED_RULE_FIELDS[field];
          if (computed !== undefined) throw new UsageError(`--match: "${field}" is computed by rules from the record's ${computed}, not a field of it; match on ${computed} instead`);
          throw new UsageError(`--match: ${family} records (the source of rule ${rule}) have no field "${cleanLine(field, 80)}"; their fields: ${recordFieldNames(family).join(", ")}, or a rule's name for one of them (${Object.keys(RULE_FIELD_ALIASES).join(", ")}) (nested with a dot, e.g. contract.contract_address; list items by index, e.g. topics.1)`);
        }
      }
      return add(context, newSilence({ ...(rule === undefined ? {} : { rule }), match, matchers, forMs, reason, now: common.now() }));
    }
    case "list":
      if (rest.length > 0) throw new UsageError("list takes no arguments");
      return list(context, values.json);
    case "remove":
      if (rest.length !== 1) throw new UsageError("remove takes one silence id (see `kaiawatch silence list`)");
      return remove(context, rest[0]!);
  }
}

/** The label matchers given as arguments, each read as an Alertmanager config line (several may share one). */
function labelMatchersOf(texts: readonly string[]): Matcher[] {
  return texts.flatMap((text) => {
    try {
      return parseLabelMatchers(text);
    } catch (error) {
      if (error instanceof MatcherError) throw new UsageError(`not a label matcher: "${cleanLine(text, 80)}": ${error.message}`);
      throw error;
    }
  });
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

/**
 * The store's silences, closed after `fn`. To write, the store is opened as a daemon opens it;
 * when a daemon holds the file store's lock, read-only with its silences written on this
 * connection (the daemon reads them at its next delivery round).
 */
async function withSilences<T>(context: Context, write: boolean, fn: (backend: Backend) => Promise<T>): Promise<T> {
  const options = storeOptionsOf(context.config.store);
  let backend: Backend;
  try {
    backend = await openBackend(context.common, { ...options, readOnly: !write });
  } catch (error) {
    if (!write || !isStoreError(error, "KW_STORE_LOCKED")) throw error;
    backend = await openBackend(context.common, { ...options, readOnly: true, silencesWritable: true });
  }
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

const ADDED = "It holds from the next delivery round of the daemon (every replica reads the silences from the store).\n";
const REMOVED = "Its alerts are sent again from the next delivery round of the daemon (every replica reads the silences from the store); those it held back stay unsent.\n";

async function add(context: Context, silence: Silence): Promise<number> {
  await withSilences(context, true, (backend) => backend.silences.add(silence));
  context.io.stdout.write(`Silence ${silence.id} added: ${describe(silence)}\n${ADDED}`);
  return EXIT_OK;
}

async function remove(context: Context, id: string): Promise<number> {
  const { io, common } = context;
  const removed = await withSilences(context, true, (backend) => backend.silences.remove(id, common.now()));
  if (removed === undefined) {
    io.stderr.write(`kaiawatch silence: no active silence "${cleanLine(id, 40)}" (see \`kaiawatch silence list\`; an expired silence is already gone)\n`);
    return EXIT_RUNTIME;
  }
  io.stdout.write(`Silence ${id} removed: ${describe(removed)}\n${REMOVED}`);
  return EXIT_OK;
}

async function list(context: Context, json: boolean): Promise<number> {
  const { io, common } = context;
  const now = common.now();
  const active: StoredSilence[] = await withSilences(context, false, (backend) => backend.silences.active(now));
  if (json) {
    for (const silence of active) io.stdout.write(`${JSON.stringify(silence)}\n`);
    return EXIT_OK;
  }
  if (active.length === 0) {
    io.stdout.write("No active silences.\n");
    return EXIT_OK;
  }
  const rows = active.map((s) => [s.id, s.rule ?? "(any)", matchText(s), `${s.expires_at} (in ${formatDuration(Math.max(0, Math.ceil((Date.parse(s.expires_at) - now) / 1000)) * 1000)})`, String(s.suppressed), cleanLine(s.reason, 200)]);
  io.stdout.write(table(["ID", "RULE", "MATCH", "EXPIRES", "HELD BACK", "REASON"], rows));
  return EXIT_OK;
}

/** Its label matchers in braces, then its record fields: one vocabulary for both kinds. */
function matchText(silence: Silence): string {
  const labels = silence.matchers === undefined ? [] : [`{${silence.matchers.join(", ")}}`];
  const fields = Object.entries(silence.match).map(([field, value]) => `${field}=${value}`);
  const parts = [...labels, ...fields];
  return parts.length === 0 ? "(every alert)" : cleanLine(parts.join(" "), 200);
}

function describe(silence: Silence): string {
  return `${silence.rule === undefined ? "any rule" : `rule ${silence.rule}`}, ${matchText(silence)}, until ${silence.expires_at}; reason: ${cleanLine(silence.reason, 200)}`;
}

