import type { Common } from "../../common/common.js";
import { describeError } from "../../common/errors.js";
import { sleep } from "../../common/sleep.js";
import type { Ownership } from "../ownership.js";
import type { Lease, Leases } from "./leases.js";

const SOURCE_PREFIX = "source:";
const SINK_PREFIX = "sink:";

export interface LeaseKeeperOptions {
  leases: Leases;
  replicaId: string;
  leaseMs: number;
  /** What /status shows of this replica (its held sources and sinks are added). */
  info?: () => Record<string, unknown>;
  /** Called after each renewal with what was gained and lost (the dispatcher wakes a sink it gained). */
  onChange?: (change: { gained: string[]; lost: string[] }) => void;
}

/**
 * The PostgreSQL ownership: every third of a lease it renews the leases it holds, sheds
 * those above the fair share (a replica joined), and claims free or expired ones up to it.
 *
 * A lease is used only until its expiry minus a third of a lease, by this replica's own
 * clock: a replica whose renewals fail (the database unreachable, a long pause) stops
 * polling and delivering before another can take its resources over, rather than after.
 * A source's commit is fenced by its epoch in any case (PostgresStore.commitWindow).
 */
export function createLeaseKeeper(common: Common, options: LeaseKeeperOptions): Ownership {
  const { leases, leaseMs } = options;
  const margin = Math.floor(leaseMs / 3);
  const logger = common.logger.child({ component: "leases", replica: options.replicaId });
  let held = new Map<string, Lease>();
  let controller: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const usable = (lease: Lease) => common.now() < lease.expiresMs - margin;
  // A source's lease row is named by the source key alone, as PostgresStore.commitWindow
  // fences the cursor of that key; sinks keep their prefix (source keys are src_<hex>).
  const leaseKey = (resource: string) => (resource.startsWith(SOURCE_PREFIX) ? resource.slice(SOURCE_PREFIX.length) : resource);
  const resourceOf = (key: string) => (key.startsWith(SINK_PREFIX) ? key : `${SOURCE_PREFIX}${key}`);

  async function renewNow(): Promise<void> {
    const before = new Set(held.keys());
    const renewed = await leases.renew();
    // A round that lost leases (shed for a newcomer, or taken over) claims nothing: claiming
    // up to the share plus slack would take back at once what was just shed.
    const claimed = renewed.lost.length > 0 ? [] : await leases.claim();
    const next = new Map<string, Lease>();
    for (const lease of [...renewed.held, ...claimed]) next.set(resourceOf(lease.key), lease);
    held = next;
    const gained = [...next.keys()].filter((key) => !before.has(key)).sort();
    const lost = [...before].filter((key) => !next.has(key)).sort();
    if (gained.length > 0 || lost.length > 0) {
      logger.info({ gained: gained.length, lost: lost.length, holding: next.size }, "leases changed");
      options.onChange?.({ gained, lost });
    }
    const resources = [...next.keys()];
    await leases.heartbeat({
      ...options.info?.(),
      sources: resources.filter((key) => key.startsWith(SOURCE_PREFIX)).map((key) => key.slice(SOURCE_PREFIX.length)),
      sinks: resources.filter((key) => key.startsWith(SINK_PREFIX)).map((key) => key.slice(SINK_PREFIX.length)),
    });
  }

  async function keep(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(Math.max(1, Math.floor(leaseMs / 3)), signal).catch(() => undefined);
      if (signal.aborted) break;
      try {
        await renewNow();
      } catch (error) {
        // Nothing more to do: holds() stops answering for each lease before it expires.
        logger.warn({ err: describeError(error) }, "cannot renew the leases; work stops on each one before it expires");
      }
    }
  }

  return {
    replicaId: options.replicaId,
    holds(resource) {
      const lease = held.get(resource);
      return lease !== undefined && usable(lease) ? { epoch: lease.epoch } : undefined;
    },
    async start(resources) {
      await leases.register(resources.map(leaseKey));
      await renewNow();
      controller = new AbortController();
      loop = keep(controller.signal);
    },
    async stop() {
      controller?.abort();
      await loop;
      held = new Map();
      await leases.leave().catch((error: unknown) => logger.warn({ err: describeError(error) }, "cannot give the leases back; the others take over when they expire"));
    },
    renewNow,
  };
}
