/**
 * Which of the plan's resources this process may work on. Resources are named
 * `source:<key>` (polling a source and moving its cursor) and `sink:<name>` (running the
 * sink's delivery worker). With the file store one process owns everything; with the
 * PostgreSQL store replicas lease them (postgres/lease-keeper.ts), so that each source is
 * polled, and each sink delivered, by one replica at a time.
 */
export interface Ownership {
  /** This replica's id (logs, metrics, the explorer request header). */
  readonly replicaId: string;
  /**
   * The lease on `resource` if this process may use it now; `epoch` fences the source's
   * commits (a commit with an older epoch is refused). Synchronous: asked before every tick
   * and every delivery pass, answered from what the last renewal learned.
   */
  holds(resource: string): HeldLease | undefined;
  /** Takes part with these resources (the plan's) and keeps the leases renewed until stop(). */
  start(resources: readonly string[]): Promise<void>;
  /** Renews, sheds and claims now rather than at the next third of a lease (start, tests). */
  renewNow(): Promise<void>;
  /** Gives every lease back so the other replicas take over at once. */
  stop(): Promise<void>;
}

/** What a process holds of a resource while it may use it. */
export interface HeldLease {
  /** Fences the source's commits; absent with one process (nothing to fence). */
  epoch?: number;
  /**
   * Aborted (with a KW_STORE_LEASE_LOST StoreError) the moment this process must stop using
   * the resource: the lease shed for a replica that joined, taken over, or its usable time
   * over without a renewal. A tick runs under it, so the window in flight stops before its next
   * explorer request rather than after: the replica that takes the source over polls that
   * window, and two replicas must never poll the same one. Absent with one process.
   */
  signal?: AbortSignal;
}

export const sourceResource = (key: string): string => `source:${key}`;
export const sinkResource = (name: string): string => `sink:${name}`;

/** The file store: one process, which owns every resource (no epoch: its commits are not fenced). */
export function createSoleOwnership(replicaId: string): Ownership {
  return {
    replicaId,
    holds: () => ({}),
    start: async () => {},
    renewNow: async () => {},
    stop: async () => {},
  };
}
