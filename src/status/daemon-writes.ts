import type { Common } from "../common/common.js";
import { sleep } from "../common/sleep.js";
import type { DeadLetterSelector, RequeueResult } from "../notify/dead-letters.js";
import type { Dispatcher } from "../notify/dispatcher.js";
import { isActive, type Silence, type SilenceBook } from "../notify/silences.js";
import { newOutboxEntries } from "../model/outbox-entry.js";
import type { Store } from "../store/types.js";
import type { WatchEngine } from "../watch/engine.js";
import type { PlannedSource } from "../watch/poller.js";
import { findCursorTarget, moveCursor, type MovedCursor } from "../watch/move-cursor.js";
import type { AlertToQueue } from "./alerts-body.js";
import type { CursorMove } from "./cursor-body.js";
import type { HeadReading } from "./daemon-status.js";
import type { SilenceChange } from "./silence-body.js";
import type { CursorMoveResult, StatusProvider } from "./status-server.js";

/**
 * A cursor is moved between two ticks of its source: a running tick commits its own cursor
 * after each window and would overwrite the move, so it is interrupted first (it ends at its
 * next explorer request). Past this wait (a tick that does not end) the move is refused rather than lost.
 */
export const CURSOR_MOVE_WAIT_MS = 60_000;
const CURSOR_MOVE_POLL_MS = 50;

export interface DaemonWriteParts {
  sources: readonly PlannedSource[];
  store: Store;
  engine: WatchEngine;
  dispatcher: Dispatcher;
  head: HeadReading;
  silences?: Pick<SilenceBook, "add" | "remove">;
}

/** What the status API's writes (POST /api/…) do to a running daemon: what the commands do to a stopped one's store. */
export function createDaemonWrites(common: Common, parts: DaemonWriteParts): Required<Pick<StatusProvider, "requeueDeadLetters" | "moveCursors" | "queueAlerts" | "changeSilences">> {
  const { store, engine, dispatcher, head } = parts;

  function requeueDeadLetters(selector: DeadLetterSelector): Promise<RequeueResult> {
    return dispatcher.retry(selector);
  }

  /**
   * Moves cursors as `kaiawatch cursors --set` does on a stopped daemon. Each source is moved
   * once it is between ticks, in the same turn of the event loop as that check, so that no
   * tick starts in between (a tick reads its cursor from the store when it starts).
   */
  async function moveCursors(moves: readonly CursorMove[]): Promise<CursorMoveResult> {
    // A source's key moves the source and every watch it serves; a watch's own key, when a
    // shared source serves it, moves that watch's position alone (see findCursorTarget).
    const targets = moves.map((move) => ({ move, target: findCursorTarget(parts.sources, move.source) }));
    const unknown = targets.filter((t) => t.target === undefined).map((t) => t.move.source);
    if (unknown.length > 0) return { ok: false, error: `the running daemon polls no source ${unknown.join(", ")} and serves no watch from it (a source of a watch no rule reads, or of another config?)` };
    const headBlock = head.state().block;
    if (moves.some((m) => m.block === "latest") && headBlock === null) return { ok: false, error: "the daemon has not read the chain head yet: cannot move a cursor to latest" };
    const moved: MovedCursor[] = [];
    for (const { move, target } of targets) {
      const source = target!.source;
      const to = move.block === "latest" ? headBlock! : move.block;
      const isRunning = () => engine.states().some((state) => state.key === source.key && state.running);
      for (let waited = 0; isRunning(); waited += CURSOR_MOVE_POLL_MS) {
        if (waited >= CURSOR_MOVE_WAIT_MS) return { ok: false, error: `source ${source.key} stayed in one tick for ${CURSOR_MOVE_WAIT_MS / 1000} s; moved so far: ${moved.length}` };
        // A running tick (a long catch-up) would go on from the old position and commit over
        // the move: it is ended at its next request, its committed windows kept.
        if (waited === 0) await engine.interrupt(source.key, `cursor moved to ${to} through the status API`);
        else await sleep(CURSOR_MOVE_POLL_MS, common.signal);
      }
      // setCursor changes the store in this turn; its await is only the commit to disk.
      moved.push(...(await moveCursor(store, target!, to, new Date(common.now()))));
    }
    return { ok: true, moved };
  }

  /** Queues what `replay --send` found, as that command does with the store in hand: deduplicated by entry id. */
  async function queueAlerts(alerts: readonly AlertToQueue[]): Promise<{ ok: true; queued: number; already_queued: number } | { ok: false; error: string }> {
    const known = new Set(Object.keys(await dispatcher.states()));
    const unknown = [...new Set(alerts.flatMap((a) => a.sinks).filter((sink) => !known.has(sink)))];
    if (unknown.length > 0) return { ok: false, error: `the running daemon has no sink ${unknown.join(", ")} (is it running another config?)` };
    const now = new Date(common.now());
    const entries = alerts.flatMap((a) => newOutboxEntries(a.alert, a.sinks, now));
    const { added } = await store.enqueue(entries);
    if (added > 0) dispatcher.kick();
    return { ok: true, queued: added, already_queued: entries.length - added };
  }

  /** `kaiawatch silence add/remove` beside a running daemon: the daemon's silence book takes it (and stores it). */
  async function changeSilences(change: SilenceChange): Promise<{ ok: true; silence: Silence } | { ok: false; status: 400 | 404; error: string }> {
    const book = parts.silences;
    if (book === undefined) return { ok: false, status: 400, error: "this daemon keeps no silences" };
    const now = common.now();
    if ("add" in change) {
      if (!isActive(change.add, now)) return { ok: false, status: 400, error: `the silence ended already (${change.add.expires_at})` };
      await book.add(change.add, now);
      return { ok: true, silence: change.add };
    }
    const removed = await book.remove(change.remove, now);
    return removed === undefined ? { ok: false, status: 404, error: `no active silence "${change.remove}" (an expired silence is already gone)` } : { ok: true, silence: removed };
  }

  return { requeueDeadLetters, moveCursors, queueAlerts, changeSilences };
}
