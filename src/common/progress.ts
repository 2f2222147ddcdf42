import type { Logger } from "./logger.js";
import { formatDuration } from "./duration.js";

/** How often long work logs its progress when stderr is not a terminal. */
export const PROGRESS_LOG_INTERVAL_MS = 5_000;
/** How often the terminal line is redrawn at most. */
const REDRAW_INTERVAL_MS = 200;

/** One piece of long work counted in blocks: a catch-up, a replay. */
export interface ProgressTask {
  /** `blocks` more are done. */
  advance(blocks: number): void;
  /** The work ended (done, failed or interrupted). */
  end(): void;
}

export interface Progress {
  /**
   * Starts a task of `total` blocks. `label` says what it is ("catching up", "replay"), `fields`
   * name it in log lines (watch, source).
   */
  start(task: { label: string; total: number; fields?: Record<string, unknown> }): ProgressTask;
}

export interface ProgressOptions {
  /** The clock (injected: tests step it). */
  now: () => number;
  /** Where progress is logged at info when there is no terminal. */
  logger: Logger;
  /**
   * A terminal to draw one progress line on (stderr when it is a TTY). When set, nothing is
   * logged: the line says it all, and log lines would tear it.
   */
  terminal?: NodeJS.WritableStream;
  intervalMs?: number;
}

interface Running {
  label: string;
  total: number;
  done: number;
  startedAt: number;
  loggedAt: number;
  fields: Record<string, unknown>;
}

/** Blocks a second, and the seconds left at that rate (null before any block is done). */
export function rateOf(done: number, total: number, elapsedMs: number): { perSecond: number; secondsLeft: number | null } {
  const perSecond = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  return { perSecond, secondsLeft: perSecond > 0 ? Math.ceil((total - done) / perSecond) : null };
}

/**
 * Progress of long work: blocks done of the total, the rate and the time left. On a terminal
 * one line, redrawn in place (every task together); elsewhere an info log line per task every
 * few seconds, so that a catch-up of minutes is not silence in a journal.
 */
export function createProgress(options: ProgressOptions): Progress {
  const interval = options.intervalMs ?? PROGRESS_LOG_INTERVAL_MS;
  const tasks = new Set<Running>();
  let drawnAt = -Infinity;
  let drawn = false;

  function describe(label: string, done: number, total: number, elapsedMs: number): string {
    const { perSecond, secondsLeft } = rateOf(done, total, elapsedMs);
    const percent = total > 0 ? Math.floor((done * 100) / total) : 100;
    return `${label}: ${done} of ${total} blocks (${percent}%), ${perSecond.toFixed(1)} blocks/s, ${secondsLeft === null ? "time left unknown" : `${formatDuration(secondsLeft * 1000)} left`}`;
  }

  function draw(now: number, force: boolean): void {
    const terminal = options.terminal!;
    if (!force && now - drawnAt < REDRAW_INTERVAL_MS) return;
    drawnAt = now;
    if (tasks.size === 0) {
      if (drawn) terminal.write("\r\x1b[K");
      drawn = false;
      return;
    }
    let done = 0;
    let total = 0;
    let startedAt = Infinity;
    for (const task of tasks) {
      done += task.done;
      total += task.total;
      startedAt = Math.min(startedAt, task.startedAt);
    }
    const labels = [...new Set([...tasks].map((t) => t.label))].join(", ");
    terminal.write(`\r\x1b[K${describe(tasks.size > 1 ? `${labels} (${tasks.size})` : labels, done, total, now - startedAt)}`);
    drawn = true;
  }

  return {
    start({ label, total, fields = {} }) {
      const now = options.now();
      const task: Running = { label, total, done: 0, startedAt: now, loggedAt: now, fields };
      tasks.add(task);
      if (options.terminal) draw(now, true);
      return {
        advance(blocks) {
          task.done = Math.min(task.total, task.done + blocks);
          const at = options.now();
          if (options.terminal) return draw(at, false);
          if (at - task.loggedAt < interval) return;
          task.loggedAt = at;
          const { perSecond, secondsLeft } = rateOf(task.done, task.total, at - task.startedAt);
          options.logger.info({ ...task.fields, blocks_done: task.done, blocks_total: task.total, blocks_per_second: Math.round(perSecond * 10) / 10, seconds_left: secondsLeft }, describe(task.label, task.done, task.total, at - task.startedAt));
        },
        end() {
          if (!tasks.delete(task)) return;
          if (options.terminal) draw(options.now(), true);
        },
      };
    },
  };
}
