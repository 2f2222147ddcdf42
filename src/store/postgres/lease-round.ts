import type { StoreError } from "../errors.js";
import type { LeaseResource } from "../resources.js";
import type { Lease } from "./leases.js";

/** A lease this replica holds, with the signals of the work under it. */
export interface Holding {
  lease: Lease;
  /** Aborted when the work must stop at once (HeldLease.signal): taken over, lapsed, stopping. */
  stop: AbortController;
  /** Aborted when the lease is being handed over (HeldLease.stopping): finish the window, start no other. */
  handover: AbortController;
}

/**
 * What a renewal round gives back: the leases handed over whose tick has ended (its last
 * window committed), and the surplus no tick uses. A surplus lease in use is handed over
 * instead (its `handover` aborted here): its tick commits the window in flight and starts
 * no other, and it goes at a later round.
 */
export function sortSurplus(
  held: ReadonlyMap<LeaseResource, Holding>,
  uses: ReadonlyMap<LeaseResource, number>,
  surplus: ReadonlySet<LeaseResource>,
  reason: (resource: LeaseResource, holding: Holding, why: string) => StoreError,
): { releasing: LeaseResource[]; handingOver: LeaseResource[] } {
  const releasing: LeaseResource[] = [];
  const handingOver: LeaseResource[] = [];
  for (const [resource, holding] of held) {
    if (holding.stop.signal.aborted) continue;
    const inUse = (uses.get(resource) ?? 0) > 0;
    if (holding.handover.signal.aborted && !inUse) releasing.push(resource);
    else if (surplus.has(resource) && inUse) {
      if (!holding.handover.signal.aborted) holding.handover.abort(reason(resource, holding, "is handed over to a replica that joined; the window in flight is committed first"));
      handingOver.push(resource);
    } else if (surplus.has(resource)) releasing.push(resource);
  }
  return { releasing, handingOver };
}

/** The holdings after a round: the leases renewed or claimed, less those just released. */
export function nextHoldings(
  held: ReadonlyMap<LeaseResource, Holding>,
  leases: readonly Lease[],
  gone: ReadonlySet<LeaseResource>,
  resourceOf: (key: string) => LeaseResource,
  fresh: (lease: Lease) => Holding,
): Map<LeaseResource, Holding> {
  const next = new Map<LeaseResource, Holding>();
  for (const lease of leases) {
    const resource = resourceOf(lease.key);
    if (gone.has(resource)) continue;
    const previous = held.get(resource);
    // The same lease renewed keeps its signals, so the tick running under it goes on (and a
    // lease being handed over stays so until its work has ended and it is released). One
    // ended but not released (the flush failed) is usable again under new signals.
    const kept = previous !== undefined && previous.lease.epoch === lease.epoch && !previous.stop.signal.aborted;
    next.set(resource, kept ? { ...previous, lease } : fresh(lease));
  }
  return next;
}
