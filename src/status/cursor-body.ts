import type { IncomingMessage } from "node:http";
import { readJsonBody } from "./json-body.js";

/** One cursor move asked of a running daemon: a source key and the last block to count as processed. */
export interface CursorMove {
  source: string;
  /** A block number, or "latest": the head the daemon scans up to (skip everything until now). */
  block: number | "latest";
}

const MAX_CURSOR_BODY_BYTES = 64 * 1024;
const MAX_MOVES = 1000;

export type ParsedCursorMoves = { ok: true; moves: CursorMove[] } | { ok: false; status: 400 | 413 | 415; error: string };

/** Reads the body of POST /api/cursors: `{"cursors": [{"source": "src_…", "block": 123 | "latest"}, …]}`. */
export async function parseCursorBody(req: IncomingMessage): Promise<ParsedCursorMoves> {
  const body = await readJsonBody(req, MAX_CURSOR_BODY_BYTES);
  return body.ok ? cursorMovesOf(body.value) : body;
}

export function cursorMovesOf(value: unknown): ParsedCursorMoves {
  const wrong: ParsedCursorMoves = { ok: false, status: 400, error: 'expected {"cursors": [{"source": "<source key>", "block": <block number> | "latest"}, ...]}' };
  if (value === null || typeof value !== "object" || Array.isArray(value)) return wrong;
  const list = (value as Record<string, unknown>).cursors;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_MOVES) return wrong;
  const moves: CursorMove[] = [];
  for (const item of list as unknown[]) {
    if (item === null || typeof item !== "object") return wrong;
    const { source, block } = item as Record<string, unknown>;
    if (typeof source !== "string" || source.length === 0 || source.length > 200) return wrong;
    if (block !== "latest" && !(typeof block === "number" && Number.isSafeInteger(block) && block >= 0)) return wrong;
    moves.push({ source, block });
  }
  return { ok: true, moves };
}
