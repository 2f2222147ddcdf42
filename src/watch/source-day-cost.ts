import { OPERATIONS } from "../explorer/operations.js";
import { firingsOfDay, previousFiring } from "./schedule-firings.js";
import { isNodeOperation, isPerBlockOperation, type SourceOperation } from "./source.js";

/** Kaia makes one block a second: a tick covers as many blocks as seconds passed since the previous one. */
const BLOCKS_PER_SECOND = 1;

export interface SourceDayCost {
  ticksPerDay: number;
  requestsPerDay: number;
  creditsPerDay: number;
}

/**
 * What one source spends in the UTC day starting at `dayStart`, on a quiet chain: the same
 * count as `planCredits` (a windowed source asks once per window of at most
 * `maxWindowBlocks` blocks, operation 8 once per block, one page per window), so that the
 * planner's choice and `kaiawatch plan`'s totals agree. A node source (transactions) asks
 * the node once per block, for no credits.
 */
export function sourceDayCost(operation: SourceOperation, schedule: string, maxWindowBlocks: number, dayStart: number): SourceDayCost {
  const perBlock = isPerBlockOperation(operation);
  const firings = firingsOfDay(schedule, dayStart);
  const before = firings.length === 0 ? undefined : previousFiring(schedule, dayStart);
  let requests = 0;
  firings.forEach((second, i) => {
    const previous = i > 0 ? (firings[i - 1] as number) : (before ?? second - 1);
    const blocks = (second - previous) * BLOCKS_PER_SECOND;
    requests += perBlock ? blocks : Math.max(1, Math.ceil(blocks / maxWindowBlocks));
  });
  return { ticksPerDay: firings.length, requestsPerDay: requests, creditsPerDay: isNodeOperation(operation) ? 0 : requests * OPERATIONS[operation].cost };
}
