import { createHash } from "node:crypto";
import { answerBoundsOf } from "../explorer/answer-bounds.js";
import { MAX_RECORD_DEPTH, MAX_RECORD_TEXT } from "../model/record-limits.js";

/**
 * Whether no record of this page can need a cut: the answer it was parsed from held no
 * string longer than MAX_RECORD_TEXT as written and nested no deeper than MAX_RECORD_DEPTH
 * as a whole (a record sits two levels down, so it nests less). Then capRecord's walk over
 * each record would find nothing, and the pipeline skips it. A list the explorer client did
 * not read has no bounds noted: its records are walked.
 */
export function pageWithinRecordLimits(records: readonly unknown[]): boolean {
  const bounds = answerBoundsOf(records);
  return bounds !== undefined && bounds.longestString <= MAX_RECORD_TEXT && bounds.depth <= MAX_RECORD_DEPTH;
}

/** Starts the mark a cut text ends with; nothing the chain writes is trusted to contain it or not. */
export const CUT_MARK = "…[cut by kaiawatch:";

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * A text longer than MAX_RECORD_TEXT, cut to exactly that length with a mark at its end:
 * `…[cut by kaiawatch: 20971520 characters, sha256 <hex>]`. The SHA-256 is of the whole
 * text's UTF-8, so a receiver holding the full text (from the explorer) can tell it is the
 * one. Shorter texts are returned as they are.
 */
export function capText(text: string): string {
  if (text.length <= MAX_RECORD_TEXT) return text;
  const hash = createHash("sha256").update(text, "utf8").digest("hex");
  const mark = `${CUT_MARK} ${text.length} characters, sha256 ${hash}]`;
  let keep = MAX_RECORD_TEXT - mark.length;
  // Never half a surrogate pair: the half left would be an invalid character in every sink.
  if (isHighSurrogate(text.charCodeAt(keep - 1))) keep -= 1;
  return text.slice(0, keep) + mark;
}

const TOO_DEEP = `[cut by kaiawatch: nested deeper than ${MAX_RECORD_DEPTH} levels]`;

/**
 * Bounds an explorer record as it enters the pipeline, in place (it was parsed for this
 * call alone, and copying every record of a page would cost for the rare one cut): every
 * text longer than MAX_RECORD_TEXT is cut (capText), and a map or list nested deeper than
 * MAX_RECORD_DEPTH is replaced by a text saying so, so that nothing after this (rules,
 * JSON.stringify into the outbox, the sinks) walks more than that. Returns the record.
 */
export function capRecord<T>(record: T): T {
  if (record !== null && typeof record === "object") capInside(record as Record<string, unknown>, 1);
  return record;
}

function capInside(node: Record<string, unknown> | unknown[], depth: number): void {
  const keys = Array.isArray(node) ? undefined : Object.keys(node);
  const length = keys === undefined ? (node as unknown[]).length : keys.length;
  for (let i = 0; i < length; i++) {
    let key = keys === undefined ? i : (keys[i] as string);
    // A key is text from the same stranger: a 20 MB key would be stored and sent like a value.
    if (typeof key === "string" && key.length > MAX_RECORD_TEXT) {
      const shorter = capText(key);
      (node as Record<string, unknown>)[shorter] = (node as Record<string, unknown>)[key];
      delete (node as Record<string, unknown>)[key];
      key = shorter;
    }
    const value = (node as Record<string | number, unknown>)[key];
    if (typeof value === "string") {
      if (value.length > MAX_RECORD_TEXT) (node as Record<string | number, unknown>)[key] = capText(value);
    } else if (value !== null && typeof value === "object") {
      if (depth >= MAX_RECORD_DEPTH) (node as Record<string | number, unknown>)[key] = TOO_DEEP;
      else capInside(value as Record<string, unknown> | unknown[], depth + 1);
    }
  }
}
