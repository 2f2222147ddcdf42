/**
 * The newest block the explorer can be trusted to have indexed: the chain head minus
 * `chain.lag_blocks` (the explorer indexes a little behind the node), never below block 0.
 * Past it a window could miss records the explorer has not indexed yet, so the daemon scans
 * up to it and `replay` refuses to go beyond it.
 */
export function indexedHead(chainHead: number, lagBlocks: number): number {
  return Math.max(0, chainHead - lagBlocks);
}
