import type { Store } from "../store/types.js";
import type { PlannedSource, SourceMember } from "./poller.js";

/**
 * What a cursor key names in a plan. A source's own key names the whole source: its cursor
 * and the position of every watch it serves. The own key of a watch served by a shared
 * source names that watch's position alone (kept under its own key, see the poller's
 * handover): the shared source goes back to the lowest position of its watches, and each of
 * the others skips the blocks it already had, so moving one watch moves nothing else.
 */
export type CursorTarget =
  | { kind: "source"; source: PlannedSource; /** Every watch the move moves. */ watches: string[] }
  | { kind: "position"; source: PlannedSource; member: SourceMember };

export function findCursorTarget(sources: readonly PlannedSource[], key: string): CursorTarget | undefined {
  for (const source of sources) {
    if (source.key === key) return { kind: "source", source, watches: [...new Set((source.members ?? []).map((m) => m.watch).concat(source.watch))] };
    const member = source.members?.find((m) => m.ownKey === key && m.ownKey !== source.key);
    if (member) return { kind: "position", source, member };
  }
  return undefined;
}

export interface MovedCursor {
  /** The key moved: a source, or a watch's position. */
  source: string;
  watch: string;
  from: number | null;
  to: number;
}

/**
 * The stored description of a watch's position while a shared source serves it: the same text
 * for every watch of the source (the store lists the watch beside it), so that 100,000
 * positions hold one string, not one each. `kaiawatch cursors` describes the positions of the
 * config's watches from the plan; this text shows for a position no longer in it.
 */
export function positionDescription(sourceKey: string): string {
  return `position of a watch served by ${sourceKey}`;
}

/**
 * Moves what a key names to `block` (the last block processed: scanning resumes at block + 1).
 * The caller makes sure the source is between two ticks: a tick reads the cursor and the
 * positions when it starts.
 */
export async function moveCursor(store: Store, target: CursorTarget, block: number, now: Date): Promise<MovedCursor[]> {
  const at = now.toISOString();
  const { source } = target;
  const moved: MovedCursor[] = [];
  const description = positionDescription(source.key);
  const position = async (member: SourceMember) => {
    const { before } = await store.moveCursor({ key: member.ownKey, watch: member.watch, source: source.family, description, block, updated_at: at });
    moved.push({ source: member.ownKey, watch: member.watch, from: before ?? null, to: block });
  };
  if (target.kind === "position") {
    await position(target.member);
    return moved;
  }
  // The source's watches kept apart move with it: else the source would go back to the lowest of
  // them. First: while they follow the source (Cursor.follows), each reads where the source is.
  for (const member of source.members ?? []) if (member.ownKey !== source.key) await position(member);
  const { before } = await store.moveCursor({ key: source.key, watch: source.watch, source: source.family, description: source.description, block, updated_at: at });
  moved.unshift({ source: source.key, watch: source.watch, from: before ?? null, to: block });
  return moved;
}
