import { KaiawatchError } from "../common/errors.js";

/** A single block holds more records than the API can count: no window split can help. */
export class BlockTooDenseError extends KaiawatchError {
  override name = "BlockTooDenseError";
  constructor(block: number, totalCount: number) {
    super("KW_WATCH_BLOCK_TOO_DENSE", `block ${block} holds ${totalCount} or more records, more than the explorer can page through for one block`);
  }
}
