/**
 * Where a source without a cursor begins: config's `start` (`latest`, a block number, or
 * `-N` blocks before the head), resolved by the watch layer into the source's first cursor.
 */
export type StartPosition = { kind: "latest" } | { kind: "block"; block: number } | { kind: "relative"; blocks: number };
