/**
 * What the pass before parsing measured of the answer a list of records came from: its
 * longest string as written (escapes counted, so never shorter than as read) and how deep
 * it nests as a whole. Kept beside the list (a WeakMap: gone with the page), so that the
 * pipeline can tell without walking the records that none of them can need a cut
 * (src/families/cap-record.ts: pageWithinRecordLimits).
 */
export interface AnswerBounds {
  longestString: number;
  depth: number;
}

const bounds = new WeakMap<readonly unknown[], AnswerBounds>();

/** Notes the bounds of the answer `records` was parsed from (the client does, once per page). */
export function noteAnswerBounds(records: readonly unknown[], answer: AnswerBounds): void {
  bounds.set(records, { longestString: answer.longestString, depth: answer.depth });
}

/** The bounds noted for `records`, if it came from the explorer client. */
export function answerBoundsOf(records: readonly unknown[]): AnswerBounds | undefined {
  return bounds.get(records);
}
