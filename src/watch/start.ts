import type { StartPosition } from "../model/start-position.js";

/**
 * The cursor a new source starts with: the last block it treats as already processed.
 * `latest` starts after the current head, so a new watch does not flood its sinks with history.
 */
export function initialCursor(start: StartPosition, head: number): number {
  switch (start.kind) {
    case "latest":
      return head;
    case "block":
      return Math.max(start.block - 1, -1);
    case "relative":
      return Math.max(head - start.blocks, -1);
  }
}
