import type { Command, CommandIO } from "../command.js";
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE } from "../command.js";
import { daemonApiOf, describeApiFailure } from "../daemon-api.js";
import { readIndexedHead } from "./replay.js";
import { isStoreError } from "../../store/errors.js";
import { CONFIG_OPTIONS, CONFIG_OPTIONS_HELP, UsageError, parseCommandArgs, startConfigCommand } from "../bootstrap.js";
import type { Config } from "../../config/index.js";
import { openBackend } from "../../store/open-backend.js";
import type { Backend } from "../../store/backend.js";
import { storeOptionsOf } from "../../config/store-options.js";
import { definitionsOfWatch } from "../../watch/plan.js";
import { planFromConfig } from "../../watch/plan-from-config.js";
import { findCursorTarget, moveCursor, type MovedCursor } from "../../watch/move-cursor.js";
import { CURSOR_MOVE_CONFIRM_CREDITS, costOfMove, describeMoveCost } from "../../watch/move-cost.js";
import { describeError } from "../../common/errors.js";
import type { PlannedSource } from "../../watch/poller.js";
import { FAMILY_OF_OPERATION, describeSource, sourceKey } from "../../watch/source.js";

const HELP = `Usage: kaiawatch cursors [options] [--set NAME=BLOCK …] [--yes]

Lists every source of the config with its cursor: the last block fully processed.

  --set NAME=BLOCK   move a cursor (back to rescan, forward to skip). NAME is a source key
                     (src_…) or a watch name when that watch has one source. The next scan
                     starts at BLOCK + 1. BLOCK may be \`latest\`: the head the explorer has
                     indexed (the chain head minus chain.lag_blocks), to skip to now.
                     A watch served by a shared source (see \`kaiawatch plan\`) moves alone:
                     its position (listed as "position of watch …") moves, the shared source
                     goes back to the lowest position of its watches, and the others skip
                     what they already had. A shared source's own key moves the source and
                     every watch it serves; a watch name that would move other watches too
                     (its own source is the one they share) is refused with that key.
                     While a daemon runs (it holds the store's lock), the move goes through
                     its status API (status.listen, with status.token or the daemon's
                     token in status.write_token_file: run as the daemon's user): the
                     daemon moves the cursor between two ticks of the source.
                     With store.url (PostgreSQL shared by replicas) the move is made in the
                     database directly, and fences the source's lease: a window its replica
                     is committing from the old position is refused, and the replica goes
                     on from BLOCK + 1 at its next tick.
                     A running daemon interrupts the source's tick in progress (a catch-up
                     from the old position), keeps the windows it committed, and goes on from
                     BLOCK + 1 at the next tick.
                     Rescanned records keep their alert ids: alerts still in the outbox are
                     not queued twice.
                     Before moving, each move's cost is printed: the blocks it skips, or the
                     blocks the source scans again up to the head with the credits and time
                     that takes (estimated as \`replay\` does: at least one page per window).
                     After it, the previous positions, as a command that puts them back.
  --yes              move although a move's catch-up is estimated above ${CURSOR_MOVE_CONFIRM_CREDITS}
                     credits, or puts a cursor past the head the explorer has indexed;
                     without it such a move is refused (exit 2) and nothing moves

Options:
${CONFIG_OPTIONS_HELP}
`;

interface Row {
  key: string;
  watch: string;
  description: string;
  family: string;
  /** The watches a move of this key moves: a source's key moves every watch it serves. */
  watches: string[];
  /** The watches whose own source has this key (a watch name names these rows). */
  ownedBy: string[];
}

/**
 * The cursors of the config as the daemon plans it: each polled source, and the position of
 * each watch a shared source serves (kept under the watch's own source key), then the
 * sources of watches no rule reads (not polled, but their cursors are kept).
 */
function sourcesOfConfig(config: Config): { rows: Row[]; sources: PlannedSource[] } {
  const plan = planFromConfig(config, { compile: false });
  const rows = new Map<string, Row>();
  for (const source of plan.sources) {
    const watches = [...new Set([source.watch, ...(source.members ?? []).map((m) => m.watch)])];
    const ownedBy = [...new Set((source.members ?? []).filter((m) => m.ownKey === source.key).map((m) => m.watch))];
    rows.set(source.key, { key: source.key, watch: source.watch, description: source.description, family: source.family, watches, ownedBy });
    for (const member of source.members ?? []) {
      if (member.ownKey === source.key || rows.has(member.ownKey)) continue;
      rows.set(member.ownKey, { key: member.ownKey, watch: member.watch, description: `position of watch ${member.watch}, served by ${source.key}`, family: source.family, watches: [member.watch], ownedBy: [member.watch] });
    }
  }
  for (const watch of config.watches.filter((w) => plan.idleWatches.includes(w.name))) {
    for (const definition of definitionsOfWatch(config.chain.network, watch)) {
      const key = sourceKey(definition);
      if (!rows.has(key)) rows.set(key, { key, watch: watch.name, description: `${describeSource(definition)} (not polled: no rule reads it)`, family: FAMILY_OF_OPERATION[definition.operation], watches: [watch.name], ownedBy: [watch.name] });
    }
  }
  return { rows: [...rows.values()], sources: plan.sources };
}

function parseSet(text: string, rows: Row[]): { row: Row; block: number | "latest" } {
  const at = text.lastIndexOf("=");
  const name = text.slice(0, at);
  const blockText = text.slice(at + 1);
  if (at <= 0) throw new UsageError(`--set takes NAME=BLOCK, got "${text}"`);
  const latest = blockText.toLowerCase() === "latest";
  if (!latest && (!/^\d+$/.test(blockText) || !Number.isSafeInteger(Number(blockText)))) throw new UsageError(`--set takes NAME=BLOCK, and BLOCK must be a block number (0 or more) or latest, got "${text}"`);
  const block = latest ? "latest" : Number(blockText);
  // A key names exactly what it names: a source's key moves every watch the source serves.
  const byKey = rows.find((r) => r.key === name);
  if (byKey) return { row: byKey, block };
  // A watch name means that watch alone: its position, or its own source when it serves only it.
  const ofWatch = rows.filter((r) => r.ownedBy.includes(name));
  if (ofWatch.length > 1) throw new UsageError(`watch "${name}" has ${ofWatch.length} sources; name one by its key: ${ofWatch.map((r) => r.key).join(", ")}`);
  const row = ofWatch[0];
  if (row === undefined) throw new UsageError(`no source or watch named "${name}"; see \`kaiawatch cursors\``);
  const others = row.watches.filter((w) => w !== name);
  if (others.length > 0) {
    throw new UsageError(
      `watch "${name}" is read through source ${row.key}, which also serves ${others.map((w) => `"${w}"`).join(", ")}: moving it would move them too. To move all of them, name the source: --set ${row.key}=${blockText}`,
    );
  }
  return { row, block };
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommandArgs(args, { ...CONFIG_OPTIONS, set: { type: "string", multiple: true }, yes: { type: "boolean", default: false } });
  const loaded = await startConfigCommand(io, values);
  if (typeof loaded === "number") return loaded;
  const { common } = loaded;
  const { rows, sources } = sourcesOfConfig(loaded.config);
  const asked = (values.set ?? []).map((text) => parseSet(text, rows));
  const options = storeOptionsOf(loaded.config.store);
  if (asked.length === 0) return list(await openBackend(common, { ...options, readOnly: true }), rows, io);

  // The cost first, from the positions as they are (read-only: a running daemon holds the lock).
  let head: number | undefined;
  try {
    head = await readIndexedHead(common, loaded.config);
  } catch (error) {
    if (!values.yes) {
      io.stderr.write(`kaiawatch cursors: cannot read the chain head to show what the move costs: ${common.secrets.redact(describeError(error))}. Nothing was moved. Run again with --yes to move without the estimate${asked.some((s) => s.block === "latest") ? " (a block number, not latest)" : ""}.\n`);
      return EXIT_RUNTIME;
    }
    if (asked.some((s) => s.block === "latest")) {
      io.stderr.write(`kaiawatch cursors: cannot read the chain head, so latest means nothing: ${common.secrets.redact(describeError(error))}\n`);
      return EXIT_RUNTIME;
    }
  }
  const sets = asked.map(({ row, block }) => ({ row, block: block === "latest" ? head! : block }));
  if (head !== undefined) {
    const reading = await openBackend(common, { ...options, readOnly: true });
    const stored = new Map((await reading.store.listCursors().finally(() => reading.close())).map((c) => [c.key, c.block]));
    let confirm = false;
    for (const { row, block } of sets) {
      const target = findCursorTarget(sources, row.key);
      const cost = costOfMove(target, stored.get(row.key) ?? null, block, head, loaded.config.explorer.requests_per_second);
      confirm ||= cost.needsConfirmation;
      const what = target === undefined ? "not polled (no rule reads it): nothing scans it" : describeMoveCost(cost);
      io.stdout.write(`Moving ${row.key} (${row.watch}) from ${cost.from ?? "none"} to ${block}: ${what}.\n`);
    }
    if (confirm && !values.yes) {
      io.stderr.write(`kaiawatch cursors: nothing was moved. A move whose catch-up is estimated above ${CURSOR_MOVE_CONFIRM_CREDITS} credits, or that puts a cursor past the indexed head, needs --yes: check the block number, then run again with --yes.\n`);
      return EXIT_USAGE;
    }
  }

  let backend: Backend;
  try {
    // store.url: the PostgreSQL store the replicas share (no lock; a move fences the source's holder, see below).
    backend = await openBackend(common, options);
  } catch (error) {
    if (!isStoreError(error, "KW_STORE_LOCKED")) throw error;
    return moveThroughDaemon(io, loaded.config, sets, common.secrets.redact.bind(common.secrets), `${error.code} ${error.message}`);
  }
  const store = backend.store;
  const moved: MovedCursor[] = [];
  try {
    for (const { row, block } of sets) {
      // The cursor is the last processed block: scanning resumes at BLOCK + 1.
      const target = findCursorTarget(sources, row.key);
      if (target === undefined) {
        // A source no rule reads: nothing serves it, its cursor alone moves.
        const { before } = await store.moveCursor({ key: row.key, watch: row.watch, source: row.family, description: row.description, block, updated_at: new Date().toISOString() });
        moved.push({ source: row.key, watch: row.watch, from: before ?? null, to: block });
        continue;
      }
      moved.push(...(await moveCursor(store, target, block, new Date())));
    }
  } catch (error) {
    await backend.close();
    throw error;
  }
  io.stdout.write(describeMoves(moved, ""));
  return list(backend, rows, io);
}

/** The moves made, then how to undo them: the previous positions, as one command. */
function describeMoves(moved: readonly MovedCursor[], suffix: string): string {
  const lines = moved.map((m) => `${m.source} (${m.watch}): ${m.from ?? "none"} → ${m.to}${suffix}\n`);
  const undo = moved.filter((m) => m.from !== null && m.from !== m.to);
  if (undo.length > 0) lines.push(`To undo: kaiawatch cursors ${undo.map((m) => `--set ${m.source}=${m.from}`).join(" ")} --yes\n`);
  return lines.join("");
}

/** The cursors table; closes the backend. */
async function list(backend: Backend, rows: Row[], io: CommandIO): Promise<number> {
  try {
    const known = new Set(rows.map((r) => r.key));
    const stored = new Map((await backend.store.listCursors()).map((cursor) => [cursor.key, cursor]));
    const table = rows.map((r) => [r.key, r.watch, String(stored.get(r.key)?.block ?? "-"), stored.get(r.key)?.updated_at ?? "-", r.description]);
    // Cursors of sources no longer in the config are kept (the watch may come back): show them too.
    for (const cursor of stored.values()) if (!known.has(cursor.key)) table.push([cursor.key, cursor.watch, String(cursor.block), cursor.updated_at, `${cursor.description} (not in config)`]);
    io.stdout.write(formatTable(["SOURCE", "WATCH", "CURSOR", "UPDATED", "WHAT"], table));
  } finally {
    await backend.close();
  }
  return EXIT_OK;
}

/** A running daemon holds the store: it moves the cursors itself, through its status API. */
async function moveThroughDaemon(io: CommandIO, config: Config, sets: Array<{ row: Row; block: number }>, redact: (text: string) => string, lockMessage: string): Promise<number> {
  const api = daemonApiOf(config);
  if ("unavailable" in api) {
    io.stderr.write(`kaiawatch cursors: ${lockMessage}\nThe daemon cannot be asked instead: ${api.unavailable}.\n`);
    return EXIT_RUNTIME;
  }
  let outcome: { status: number; body: Record<string, unknown> } | Error;
  try {
    outcome = await api.post("/api/cursors", { cursors: sets.map(({ row, block }) => ({ source: row.key, block })) }, io.signal);
  } catch (error) {
    outcome = error instanceof Error ? error : new Error(String(error));
  }
  if (outcome instanceof Error || outcome.status !== 200) {
    io.stderr.write(`kaiawatch cursors: ${lockMessage}\nAsked the daemon instead, and ${redact(describeApiFailure(api, outcome))}\n`);
    return EXIT_RUNTIME;
  }
  const moved = (outcome.body.moved ?? []) as MovedCursor[];
  io.stdout.write(describeMoves(moved, ` (moved by the running daemon at ${api.url})`));
  return EXIT_OK;
}

function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

export const cursorsCommand: Command = { help: HELP, run };
