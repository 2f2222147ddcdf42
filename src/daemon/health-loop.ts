import type { Common } from "../common/common.js";
import type { Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import type { HealthMonitor } from "./health-monitor.js";
import type { WitnessAudit } from "./witness-audit.js";

/** The lease of the replica that judges kaiawatch's own health and sends its operational alerts. */
export const OPERATIONAL_RESOURCE = leaseResource("operational");

/**
 * Checks kaiawatch's own health every `operational.check_interval`, one check at a time, and
 * after each check audits the `source: both` watches (`audit`): the same replica, the one that
 * sends the operational alerts.
 */
export interface HealthLoop {
  start(): void;
  stop(): void;
}

export function createHealthLoop(common: Common, parts: { ownership: Ownership; health: HealthMonitor; audit?: WitnessAudit; replicated: boolean; intervalMs: number }): HealthLoop {
  const { ownership, health } = parts;
  const logger = common.logger;
  let timer: NodeJS.Timeout | undefined;
  // With replicas, whether this replica sent the operational alerts at the last check: one that
  // starts sending takes the episodes from the store first (health.resume()). One process
  // sends from its start, with the episodes it loaded then.
  let sending = !parts.replicated;
  // When the health check in progress started (undefined: none runs), and whether one was skipped since it.
  let checkStarted: number | undefined;
  let checkLate = false;

  function tick() {
    // With replicas, one of them (the holder of this lease) sends the operational alerts:
    // their episodes are shared in the store, and two senders would open each twice.
    // The others judge the sources they hold, for their next heartbeat, which it reads.
    if (ownership.holds(OPERATIONAL_RESOURCE) === undefined) {
      sending = false;
      return health.judgeSources();
    }
    // One check at a time: on a store that does not answer they piled up, and finished
    // out of order once it did (a later check's verdicts undone by an older one's).
    if (checkStarted !== undefined) {
      if (!checkLate) logger.warn({ running_ms: common.now() - checkStarted }, "kaiawatch's own health check is still waiting for the store; the next checks are skipped until it ends");
      checkLate = true;
      return;
    }
    checkStarted = common.now();
    const resumed = sending ? Promise.resolve() : health.resume().then(() => void (sending = true));
    resumed
      .then(() => health.check())
      .then(() => parts.audit?.run())
      .then(() => void (checkLate = false))
      .catch((error: unknown) => logger.warn({ err: String(error) }, "cannot check kaiawatch's own health; tried again at the next check"))
      .finally(() => (checkStarted = undefined));
  }

  return {
    start() {
      timer = setInterval(tick, parts.intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
