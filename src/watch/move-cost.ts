import { formatDuration } from "../common/duration.js";
import { estimateReplayCredits } from "./replay.js";
import type { CursorTarget } from "./move-cursor.js";

/**
 * A cursor move whose catch-up is estimated above this many credits, or that puts a cursor
 * past the head the explorer has indexed, asks for --yes: `cursors --set hot-wallet=99` (a
 * typo for a recent block) would otherwise start a scan of the whole chain at once.
 */
export const CURSOR_MOVE_CONFIRM_CREDITS = 1000;

/** What a move of one cursor costs, as `replay` estimates it: at least one page per window. */
export interface MoveCost {
  /** The position before the move (null: none yet). */
  from: number | null;
  to: number;
  head: number;
  /** Blocks the source scans from the new position up to the head (0 when the move is at or past it). */
  blocks: number;
  /** Blocks the move skips forward: they are never scanned for the watches it moves. */
  skipped: number;
  credits: number;
  requests: number;
  /** A lower bound on the time the catch-up takes at the explorer's request rate. */
  seconds: number;
  /** True when the move needs --yes (over the credit threshold, or past the head). */
  needsConfirmation: boolean;
}

/**
 * The cost of moving `target` (absent: a source no rule reads, which nothing scans) from
 * `from` to `to` with the indexed head at `head`. The source the target runs on scans again
 * from `to`: a watch's position moved back takes its shared source back with it.
 */
export function costOfMove(target: CursorTarget | undefined, from: number | null, to: number, head: number, requestsPerSecond: number): MoveCost {
  const blocks = target !== undefined && to < head ? head - to : 0;
  const estimate = blocks > 0 ? estimateReplayCredits([target!.source], { from: to + 1, to: head }) : { credits: 0, windows: 0 };
  const skipped = from !== null && to > from ? Math.min(to, head) - from : 0;
  return {
    from,
    to,
    head,
    blocks,
    skipped: Math.max(0, skipped),
    credits: estimate.credits,
    requests: estimate.windows,
    seconds: Math.ceil(estimate.windows / requestsPerSecond),
    needsConfirmation: estimate.credits > CURSOR_MOVE_CONFIRM_CREDITS || to > head,
  };
}

/** One line for a move's cost, as the CLI prints it before moving. */
export function describeMoveCost(cost: MoveCost): string {
  if (cost.to > cost.head) return `puts the cursor past the head the explorer has indexed (${cost.head}): the source scans nothing until the chain reaches block ${cost.to + 1}`;
  const parts: string[] = [];
  if (cost.skipped > 0) parts.push(`skips ${cost.skipped} blocks (${cost.from! + 1}–${cost.from! + cost.skipped}), never scanned`);
  if (cost.blocks > 0) parts.push(`scans ${cost.blocks} blocks (${cost.to + 1}–${cost.head}) up to the indexed head: at least ${cost.credits} credits in ${cost.requests} ${cost.requests === 1 ? "request" : "requests"}, ${formatDuration(cost.seconds * 1000)} or more at explorer.requests_per_second`);
  if (parts.length === 0) parts.push("nothing to scan: the cursor is at the indexed head");
  return parts.join("; ");
}
