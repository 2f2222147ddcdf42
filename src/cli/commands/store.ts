import type { Command, CommandIO } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME, UsageError } from "../command.js";
import { createCommandCommon, parseCommandArgs } from "../bootstrap.js";
import { describeError } from "../../common/errors.js";
import { migrateFileToPostgres } from "../../store/migrate-to-postgres.js";

const HELP = `Usage: kaiawatch store migrate --from FILE --to postgres://… [--force]

Copies a file store (store.path) into a PostgreSQL store (store.url) for running replicas:
every cursor, every outbox entry in every state (pending, dead, delivered, with its attempts
and digest), the metadata (credits, cooldowns, silences) and the open balance episodes,
in one PostgreSQL transaction: all of it or nothing. Alerts keep their ids, so nothing is lost or sent twice.

The daemon on FILE must be stopped (its lock is taken); FILE is left as it is. Then point
store.url at the database and start the replicas.

  --from FILE   the store file (the config's store.path)
  --to URL      the PostgreSQL database (postgres:// or postgresql://); kaiawatch creates its
                schema there. The URL is never printed. Reads $KW_STORE_URL when absent.
  --force       copy into a database that already has cursors or entries: what it has wins
                (cursors, entries and meta keys it already holds are kept), so a second run
                repeats nothing. Without it such a database is refused.
`;

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, { from: { type: "string" }, to: { type: "string" }, force: { type: "boolean" } }, true);
  if (positionals[0] !== "migrate" || positionals.length !== 1) throw new UsageError("kaiawatch store takes one subcommand: migrate (see --help)");
  const from = values.from;
  const to = values.to ?? io.env.KW_STORE_URL;
  if (from === undefined) throw new UsageError("store migrate needs --from FILE");
  if (to === undefined || !/^postgres(ql)?:\/\//.test(to)) throw new UsageError("store migrate needs --to postgres://… (or $KW_STORE_URL)");
  const common = createCommandCommon(io, { secrets: [to], logLevel: "warn" });
  try {
    const copied = await migrateFileToPostgres(common, { from, to, force: values.force === true });
    io.stdout.write(`copied ${copied.cursors} cursors, ${copied.entries} outbox entries and ${copied.meta} meta keys from ${from}\n`);
    return EXIT_OK;
  } catch (error) {
    io.stderr.write(`kaiawatch store migrate: ${common.secrets.redact(describeError(error))}\n`);
    return EXIT_RUNTIME;
  }
}

export const storeCommand: Command = { help: HELP, run };
