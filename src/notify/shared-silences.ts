import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { Silence } from "../model/silence.js";
import type { SilenceTable, StoredSilence } from "../store/postgres/silence-table.js";
import { isActive, silenceMatches, type SilenceBook } from "./silences.js";

export interface SharedSilenceBookOptions {
  table: SilenceTable;
  /** How often the status page's view (`list`) is read again when no admission round reads it. Default 2 s. */
  refreshMs?: number;
}

/**
 * The silences of replicas sharing a PostgreSQL store: kept in the store's table, which
 * `kaiawatch silence` writes directly (no side file). The dispatcher reads the table at
 * every admission round that has due entries (`current`), so a silence added through any
 * replica or the CLI holds back the next alert that any replica admits; there is no cache
 * to go stale. Counts of held-back alerts are added in the table, so they sum over replicas.
 */
export async function createSharedSilenceBook(common: Common, options: SharedSilenceBookOptions): Promise<SilenceBook> {
  const { table } = options;
  const refreshMs = options.refreshMs ?? 2_000;
  const logger = common.logger.child({ component: "silences" });
  let known: StoredSilence[] = await table.active(common.now());
  let seen = signature(known);
  let timer: NodeJS.Timeout | undefined;

  async function current(now: number): Promise<Silence[]> {
    known = await table.active(now);
    const next = signature(known);
    if (next !== seen) logger.info({ silences: known.map((s) => s.id) }, "silences changed");
    seen = next;
    return known.map(({ suppressed: _suppressed, ...silence }) => silence);
  }

  function active(now: number): Silence[] {
    return known.filter((s) => isActive(s, now)).map(({ suppressed: _suppressed, ...silence }) => silence);
  }

  function noteHeld(silenceIds: readonly string[]): void {
    if (silenceIds.length === 0) return;
    const held = new Map<string, number>();
    for (const id of silenceIds) held.set(id, (held.get(id) ?? 0) + 1);
    for (const silence of known) silence.suppressed += held.get(silence.id) ?? 0;
    // A count is a statistic: losing one to an outage holds back no alert and sends none.
    table.count(held).catch((error: unknown) => logger.warn({ err: describeError(error) }, "cannot count the alerts held back by silences"));
  }

  return {
    current,
    active,
    noteHeld,
    silencing(rule, alert, now) {
      const silence = active(now).find((s) => silenceMatches(s, rule, alert));
      if (silence !== undefined) noteHeld([silence.id]);
      return silence;
    },
    async add(silence, now) {
      await table.add(silence);
      await current(now);
    },
    async remove(id, now) {
      const removed = await table.remove(id, now);
      await current(now);
      return removed;
    },
    list(now) {
      return known.filter((s) => isActive(s, now)).map((s) => ({ ...s }));
    },
    start() {
      if (timer) return;
      timer = setInterval(() => {
        current(common.now()).catch((error: unknown) => logger.debug({ err: describeError(error) }, "cannot read the silences; the next look tries again"));
      }, refreshMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

function signature(silences: readonly Silence[]): string {
  return silences.map((s) => s.id).join(",");
}
