import { badBody, fieldsOf, type BodyKind, type BodyReading } from "./json-body.js";

/** One cursor move asked of a running daemon: a source key and the last block to count as processed. */
export interface CursorMove {
  source: string;
  /** A block number, or "latest": the head the daemon scans up to (skip everything until now). */
  block: number | "latest";
}

const MAX_MOVES = 1000;

/** The body of POST /api/cursors: `{"cursors": [{"source": "src_…", "block": 123 | "latest"}, …]}`. */
export const cursorBody: BodyKind<CursorMove[]> = { maxBytes: 64 * 1024, check: cursorMovesOf };

function cursorMovesOf(value: unknown): BodyReading<CursorMove[]> {
  const wrong = badBody('expected {"cursors": [{"source": "<source key>", "block": <block number> | "latest"}, ...]}');
  const list = fieldsOf(value)?.cursors;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_MOVES) return wrong;
  const moves: CursorMove[] = [];
  for (const item of list as unknown[]) {
    const { source, block } = fieldsOf(item) ?? {};
    if (typeof source !== "string" || source.length === 0 || source.length > 200) return wrong;
    if (block !== "latest" && !(typeof block === "number" && Number.isSafeInteger(block) && block >= 0)) return wrong;
    moves.push({ source, block });
  }
  return { ok: true, value: moves };
}
