import type { Command, CommandIO } from "../command.js";
import { EXIT_OK } from "../command.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, createCommandCommon, loadConfigForCommand, parseCommandArgs } from "../bootstrap.js";
import type { Config } from "../../config/index.js";
import { openStore } from "../../store/open-store.js";
import { definitionsOfWatch } from "../../watch/plan.js";
import { FAMILY_OF_OPERATION, describeSource, sourceKey } from "../../watch/source.js";

const HELP = `Usage: kaiawatch cursors [options] [--set NAME=BLOCK …]

Lists every source of the config with its cursor: the last block fully processed.

  --set NAME=BLOCK   move a cursor (back to rescan, forward to skip). NAME is a source key
                     (src_…) or a watch name when that watch has one source. The next scan
                     starts at BLOCK + 1. Needs the daemon stopped (it holds the store's lock).
                     Rescanned records keep their alert ids: alerts still in the outbox are
                     not queued twice.

Options:
${CONFIG_OPTIONS_HELP}
`;

interface Row {
  key: string;
  watch: string;
  description: string;
  family: string;
}

function sourcesOfConfig(config: Config): Row[] {
  const rows = new Map<string, Row>();
  for (const watch of config.watches) {
    for (const definition of definitionsOfWatch(config.chain.network, watch)) {
      const key = sourceKey(definition);
      if (!rows.has(key)) rows.set(key, { key, watch: watch.name, description: describeSource(definition), family: FAMILY_OF_OPERATION[definition.operation] });
    }
  }
  return [...rows.values()];
}

function parseSet(text: string, rows: Row[]): { row: Row; block: number } {
  const at = text.lastIndexOf("=");
  const name = text.slice(0, at);
  const blockText = text.slice(at + 1);
  if (at <= 0) throw new UsageError(`--set takes NAME=BLOCK, got "${text}"`);
  if (!/^\d+$/.test(blockText) || !Number.isSafeInteger(Number(blockText))) throw new UsageError(`--set takes NAME=BLOCK, and BLOCK must be a block number (0 or more), got "${text}"`);
  const byKey = rows.find((r) => r.key === name);
  if (byKey) return { row: byKey, block: Number(blockText) };
  const ofWatch = rows.filter((r) => r.watch === name);
  if (ofWatch.length === 1) return { row: ofWatch[0]!, block: Number(blockText) };
  if (ofWatch.length > 1) throw new UsageError(`watch "${name}" has ${ofWatch.length} sources; name one by its key: ${ofWatch.map((r) => r.key).join(", ")}`);
  throw new UsageError(`no source or watch named "${name}"; see \`kaiawatch cursors\``);
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, { ...CONFIG_OPTIONS, set: { type: "string", multiple: true } });
  const loaded = await loadConfigForCommand(io, values.config);
  if (typeof loaded === "number") return loaded;
  const common = createCommandCommon(io, { config: loaded.config, secrets: loaded.secrets, logLevel: values["log-level"] ?? "warn", logFormat: values["log-format"] });
  const rows = sourcesOfConfig(loaded.config);
  const sets = (values.set ?? []).map((text) => parseSet(text, rows));
  const store = await openStore(common, { path: loaded.config.store.path, readOnly: sets.length === 0 });
  try {
    for (const { row, block } of sets) {
      const before = (await store.getCursor(row.key))?.block;
      // The cursor is the last processed block: scanning resumes at BLOCK + 1.
      await store.setCursor({ key: row.key, watch: row.watch, source: row.family, description: row.description, block, updated_at: new Date().toISOString() });
      io.stdout.write(`${row.key} (${row.watch}): ${before ?? "none"} → ${block}\n`);
    }
    const known = new Set(rows.map((r) => r.key));
    const stored = new Map((await store.listCursors()).map((cursor) => [cursor.key, cursor]));
    const table = rows.map((r) => [r.key, r.watch, String(stored.get(r.key)?.block ?? "-"), stored.get(r.key)?.updated_at ?? "-", r.description]);
    // Cursors of sources no longer in the config are kept (the watch may come back): show them too.
    for (const cursor of stored.values()) if (!known.has(cursor.key)) table.push([cursor.key, cursor.watch, String(cursor.block), cursor.updated_at, `${cursor.description} (not in config)`]);
    io.stdout.write(formatTable(["SOURCE", "WATCH", "CURSOR", "UPDATED", "WHAT"], table));
  } finally {
    await store.close();
  }
  return EXIT_OK;
}

function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

export const cursorsCommand: Command = {
  name: "cursors",
  summary: "list the sources' cursors; --set NAME=BLOCK to rewind or skip",
  help: HELP,
  run,
};
