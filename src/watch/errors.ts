import { KaiawatchError } from "../common/errors.js";
import type { CountMismatch } from "./fetch-window.js";

/** A single block holds more records than the API can count: no window split can help. */
export class BlockTooDenseError extends KaiawatchError {
  override name = "BlockTooDenseError";
  constructor(block: number, totalCount: number) {
    super("KW_WATCH_BLOCK_TOO_DENSE", `block ${block} holds ${totalCount} or more records, more than the explorer can page through for one block`);
  }
}

/**
 * A tick of a source ran past `defaults.tick_timeout` and was aborted. Its committed
 * windows stay committed; the next tick goes on from the cursor.
 */
export class TickTimeoutError extends KaiawatchError {
  override name = "TickTimeoutError";
  readonly timeoutMs: number;
  constructor(source: string, timeoutMs: number) {
    super("KW_WATCH_TICK_TIMEOUT", `the tick of ${source} ran longer than tick_timeout (${timeoutMs} ms) and was aborted`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A tick ended on purpose before it reached the head: an operator moved the source's cursor
 * (a catch-up from the old position would commit over the move). Not a failure.
 */
export class TickInterruptedError extends KaiawatchError {
  override name = "TickInterruptedError";
  constructor(source: string, reason: string) {
    super("KW_WATCH_TICK_INTERRUPTED", `the tick of ${source} was interrupted: ${reason}`);
  }
}

/**
 * The explorer's `total_count` for a block range never agreed with the records it returned,
 * however often the range was fetched again. The tick fails before committing the range:
 * the cursor stays before it and the next tick tries again.
 */
export class WindowCountMismatchError extends KaiawatchError {
  override name = "WindowCountMismatchError";
  readonly mismatch: CountMismatch;
  constructor(mismatch: CountMismatch) {
    const counts = [...new Set(mismatch.reported)].join(", then ");
    const what =
      mismatch.servedTo !== undefined
        ? `the explorer answered for blocks up to ${mismatch.servedTo} only (its property.blockNumberEnd: it has not indexed further)`
        : `the explorer counted ${counts} records (total_count) but returned ${mismatch.received}`;
    super(
      "KW_WATCH_COUNT_MISMATCH",
      `blocks ${mismatch.from}-${mismatch.to}: ${what}, in ${mismatch.attempt} fetches; ` +
        "the cursor stays before these blocks and the next tick fetches them again (is the explorer still indexing them?)",
    );
    this.mismatch = mismatch;
  }
}
