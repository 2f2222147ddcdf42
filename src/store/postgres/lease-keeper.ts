import type { Common } from "../../common/common.js";
import { describeError } from "../../common/errors.js";
import { sleep } from "../../common/sleep.js";
import { StoreError } from "../errors.js";
import type { HeldLease, Ownership } from "../ownership.js";
import { leaseKeyOf, namesOf, resourceOfLeaseKey, type LeaseResource } from "../resources.js";
import type { Lease, Leases } from "./leases.js";
import { nextHoldings, sortSurplus, type Holding } from "./lease-round.js";

/** "leases changed" names this many of each list, then counts the rest. */
const LEASES_NAMED = 20;

export interface LeaseKeeperOptions {
  leases: Leases;
  replicaId: string;
  leaseMs: number;
  /** What /status shows of this replica (its held sources and sinks are added). */
  info?: () => Record<string, unknown>;
  /** Called after each renewal with what was gained and lost (the dispatcher wakes a sink it gained). */
  onChange?: (change: { gained: string[]; lost: string[] }) => void;
  /**
   * Writes this replica's deferred cursor advances (PostgresStore.flush): called before
   * leases are given back, so that the next holder starts where this replica got to rather
   * than polling again windows whose advance was not written yet.
   */
  flush?: () => Promise<void>;
}

/** A lease this replica holds, and the signals that end the work done under it. */

/**
 * The PostgreSQL ownership: every third of a lease it renews the leases it holds, sheds
 * those above the fair share (a replica joined), and claims free or expired ones up to it.
 *
 * A lease is used only until its expiry minus a third of a lease, by this replica's own
 * clock: a replica whose renewals fail (the database unreachable, a long pause) stops
 * polling and delivering before another can take its resources over, rather than after.
 *
 * "Stops" includes the work in flight. Asking holds() once before a tick was not enough: a
 * tick of a long catch-up went on polling window after window of a source that had been shed
 * or had lapsed meanwhile, while the replica that took it over polled the same windows. So
 * each lease has two signals that a tick runs under (HeldLease):
 * - `signal`, aborted when the lease is taken over or at the end of its usable time (one
 *   timer for all leases, at the earliest end): no further explorer request;
 * - `stopping`, aborted when a lease in use is shed: the tick commits the window in flight
 *   and starts no other, and the lease is released at the first renewal after that tick
 *   ended (use() counts the uses). A lease not in use is released at once: its `signal`
 *   aborted first, then the deferred cursor advances written (flush), then the release.
 * A source's commit is fenced by its epoch in any case (PostgresStore.commitWindow): the
 * last line, not the first.
 */
export function createLeaseKeeper(common: Common, options: LeaseKeeperOptions): Ownership {
  const { leases, leaseMs } = options;
  const margin = Math.floor(leaseMs / 3);
  const logger = common.logger.child({ component: "leases", replica: options.replicaId });
  let held = new Map<LeaseResource, Holding>();
  /** Work in progress under each resource's lease (use() to done()). */
  const uses = new Map<LeaseResource, number>();
  let controller: AbortController | undefined;
  let loop: Promise<void> | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let flushQueued = false;

  const usableUntil = (lease: Lease) => lease.expiresMs - margin;
  // A source's lease row is named by the source key alone, as PostgresStore.commitWindow
  // fences the cursor of that key; sinks keep their prefix (source keys are src_<hex>).
  /** The resources taken part with (start()), by their rows' names: a row is given back under its resource's name. */
  let resourceByKey = new Map<string, LeaseResource>();
  const resourceOf = (key: string): LeaseResource => resourceByKey.get(key) ?? resourceOfLeaseKey(key);
  const fresh = (lease: Lease): Holding => ({ lease, stop: new AbortController(), handover: new AbortController() });
  const reason = (resource: LeaseResource, holding: Holding, why: string) =>
    new StoreError("KW_STORE_LEASE_LOST", `replica ${options.replicaId}: the lease of ${resource} at epoch ${holding.lease.epoch} ${why}`);

  /** Ends the work under a lease at once (both signals; once). */
  function end(resource: LeaseResource, holding: Holding, why: string): void {
    if (holding.stop.signal.aborted) return;
    const error = reason(resource, holding, `${why}; its work stops here`);
    holding.handover.abort(error);
    holding.stop.abort(error);
  }

  /** Ends every lease whose usable time is over by this replica's clock, and waits for the next. */
  function endLapsed(): void {
    const now = common.now();
    for (const [resource, holding] of held) if (!holding.stop.signal.aborted && now >= usableUntil(holding.lease)) lapse(resource, holding);
    armExpiry();
  }

  /**
   * A lease past its usable time stops its work, and its cursor advances are written soon:
   * the lease is still this replica's until it expires (a third of a lease later), and the
   * replica that may take it over then starts where this one got to.
   */
  function lapse(resource: LeaseResource, holding: Holding): void {
    end(resource, holding, "was not renewed in time");
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(() => {
      flushQueued = false;
      void flushed();
    });
  }

  /** One timer for every lease: at the earliest usable end among those still in use. */
  function armExpiry(): void {
    clearTimeout(expiryTimer);
    expiryTimer = undefined;
    if (stopped) return;
    let next = Infinity;
    for (const holding of held.values()) if (!holding.stop.signal.aborted) next = Math.min(next, usableUntil(holding.lease));
    if (next === Infinity) return;
    // At least 1 ms: a clock a hair short of the end would otherwise spin on zero-delay timers.
    expiryTimer = setTimeout(endLapsed, Math.max(1, next - common.now()));
    expiryTimer.unref();
  }

  /**
   * Writes the deferred cursor advances; false (logged) if that failed. Called after the work
   * under the leases about to be released has ended and before the release: the next holder
   * then reads the cursor this replica reached, rather than polling those windows again.
   */
  async function flushed(): Promise<boolean> {
    if (options.flush === undefined) return true;
    try {
      await options.flush();
      return true;
    } catch (error) {
      logger.warn({ err: describeError(error) }, "cannot write the deferred cursor advances (the next write tries again); no lease is given back before they are written");
      return false;
    }
  }

  async function renewNow(): Promise<void> {
    // What lapsed since the last renewal stops now, even if this renewal extends it: the work
    // under it had no right to go on, and the next tick starts under the renewed lease.
    endLapsed();
    const before = new Set(held.keys());
    const renewed = await leases.renew();
    // What goes back this round: the leases handed over whose tick has ended (its last window
    // committed), and the surplus no tick uses. A surplus lease in use is handed over instead:
    // its tick commits the window in flight and starts no other, and it goes at a later round.
    const { releasing, handingOver } = sortSurplus(held, uses, new Set(renewed.surplus.map(resourceOf)), reason);
    // Their work ends before the flush (no tick starts under an ended lease), so the flush
    // writes every advance of theirs; only then may another replica claim them. (Flushing
    // before deciding, as this once did, left out the advance of a tick that ended meanwhile,
    // and the next holder polled that window again: the chaos test caught it.)
    let released: LeaseResource[] = [];
    if (releasing.length > 0) {
      for (const resource of releasing) end(resource, held.get(resource)!, "was given to a replica that joined");
      if (await flushed()) {
        await leases.release(releasing.map(leaseKeyOf));
        released = releasing;
      }
    }
    // A round that gave leases back claims nothing: claiming up to the share plus slack would
    // take back at once what was just given.
    const claimed = released.length > 0 || handingOver.length > 0 || renewed.lost.length > 0 ? [] : await leases.claim();
    const next = nextHoldings(held, [...renewed.held, ...claimed], new Set(released), resourceOf, fresh);
    for (const [resource, holding] of held) if (!next.has(resource)) end(resource, holding, "was taken over by another replica");
    held = next;
    armExpiry();
    const gained = [...next.keys()].filter((key) => !before.has(key)).sort();
    const lost = [...before].filter((key) => !next.has(key)).sort();
    if (gained.length > 0 || lost.length > 0 || handingOver.length > 0) {
      // Named, not only counted (the first few of each): which sources and sinks moved to or from this replica.
      const names = (list: readonly string[]) => (list.length > LEASES_NAMED ? [...list.slice(0, LEASES_NAMED), `… ${list.length - LEASES_NAMED} more`] : list);
      logger.info({ gained: gained.length, lost: lost.length, handing_over: handingOver.length, holding: next.size, gained_leases: names(gained), lost_leases: names(lost), handing_over_leases: names(handingOver) }, "leases changed");
      options.onChange?.({ gained, lost });
    }
    const resources = [...next.keys()];
    await leases.heartbeat({
      ...options.info?.(),
      ...namesOf(resources),
    });
  }

  async function keep(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(Math.max(1, Math.floor(leaseMs / 3)), signal).catch(() => undefined);
      if (signal.aborted) break;
      try {
        await renewNow();
      } catch (error) {
        // Nothing more to do: each lease's work stops at the end of its usable time (armExpiry).
        logger.warn({ err: describeError(error) }, "cannot renew the leases; work stops on each one before it expires");
      }
    }
  }

  function holds(resource: LeaseResource): HeldLease | undefined {
    const holding = held.get(resource);
    if (holding === undefined || holding.stop.signal.aborted || holding.handover.signal.aborted) return undefined;
    // The timer may not have run yet (a busy event loop): the clock decides.
    if (common.now() >= usableUntil(holding.lease)) {
      lapse(resource, holding);
      return undefined;
    }
    return { epoch: holding.lease.epoch, signal: holding.stop.signal, stopping: holding.handover.signal };
  }

  return {
    replicaId: options.replicaId,
    holds,
    use(resource) {
      const lease = holds(resource);
      if (lease === undefined) return undefined;
      uses.set(resource, (uses.get(resource) ?? 0) + 1);
      let ended = false;
      return {
        ...lease,
        done() {
          if (ended) return;
          ended = true;
          const left = (uses.get(resource) ?? 1) - 1;
          if (left > 0) uses.set(resource, left);
          else uses.delete(resource);
        },
      };
    },
    async start(resources) {
      stopped = false;
      resourceByKey = new Map(resources.map((resource) => [leaseKeyOf(resource), resource]));
      await leases.register([...resourceByKey.keys()]);
      await renewNow();
      controller = new AbortController();
      loop = keep(controller.signal);
    },
    async stop() {
      stopped = true;
      controller?.abort();
      await loop;
      clearTimeout(expiryTimer);
      for (const [resource, holding] of held) end(resource, holding, "was given back (the replica stops)");
      held = new Map();
      await flushed();
      await leases.leave().catch((error: unknown) => logger.warn({ err: describeError(error) }, "cannot give the leases back; the others take over when they expire"));
    },
    renewNow,
  };
}
