import { KaiawatchError } from "../common/errors.js";

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
