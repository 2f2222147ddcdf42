import type { LeaseResource } from "./resources.js";

export type { LeaseResource } from "./resources.js";

/**
 * Which of the plan's resources this process may work on (resources.ts: sources, sinks and
 * the operational alerts). With the file store one process owns everything; with the
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
  holds(resource: LeaseResource): HeldLease | undefined;
  /**
   * As holds(), for work that runs under the lease (a tick): the keeper counts it until
   * `done()`, so that a lease it sheds is released only once the window in flight is
   * committed, never while another replica could claim it and poll the same window.
   */
  use(resource: LeaseResource): LeaseUse | undefined;
  /** Takes part with these resources (the plan's) and keeps the leases renewed until stop(). */
  start(resources: readonly LeaseResource[]): Promise<void>;
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
   * the resource at once: taken over, or its usable time over without a renewal (another
   * replica may take it over soon). A tick runs under it, so it makes no further explorer
   * request. Absent with one process.
   */
  signal?: AbortSignal;
  /**
   * Aborted when this replica gives the lease away (shed for a replica that joined): the tick
   * commits the window in flight and starts no other; the keeper releases the lease after
   * `done()`. Cutting the window in flight instead would have it polled twice: once by this
   * replica (its requests reached the explorer) and again by the new holder.
   */
  stopping?: AbortSignal;
}

/** A lease in use by one piece of work; `done()` once it has ended. */
export interface LeaseUse extends HeldLease {
  done(): void;
}


/** The file store: one process, which owns every resource (no epoch: its commits are not fenced). */
export function createSoleOwnership(replicaId: string): Ownership {
  return {
    replicaId,
    holds: () => ({}),
    use: () => ({ done: () => {} }),
    start: async () => {},
    renewNow: async () => {},
    stop: async () => {},
  };
}
