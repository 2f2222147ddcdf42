import type { Common } from "../common/common.js";
import { describeError } from "../common/errors.js";
import type { HeartbeatSink } from "../notify/sinks/heartbeat.js";

/** What one beat did: pinged (and how the URL answered), or why not. */
export type BeatOutcome = { pinged: true; status: number } | { pinged: false; reason: "not_holder" | "not_ready" | "failed" | "stopped"; error?: string };

export interface HeartbeatLoopOptions {
  sink: HeartbeatSink;
  /**
   * Whether kaiawatch is ready now, as /readyz says (src/status/readiness.ts). With replicas:
   * whether this replica or another live one is ready (the holder pings for all of them).
   */
  ready(): Promise<boolean>;
  /** Whether this process holds the sink's lease (always with one process): one replica pings. */
  holds(): boolean;
}

export interface HeartbeatLoop {
  readonly name: string;
  /** Pings every interval until stop(); the first beat comes one interval after the start, when readiness has been judged. */
  start(): void;
  /** One beat now: asks holds() and ready(), then pings. What the timer runs; tests call it with their own clock. */
  beat(): Promise<BeatOutcome>;
  stop(): Promise<void>;
}

/**
 * The dead man's switch's clock. A ping is sent only while the daemon is ready: a daemon that
 * is alive but wedged (a tick that never ends is aborted at tick_timeout and its source turns
 * failing, a sink stalls, the store cannot be written) stops pinging like a dead one, and the
 * outside service raises the alarm. A failed ping is not retried: the next beat is the retry,
 * and a receiver that missed one is what the service's grace period is for. The timer is one
 * setTimeout after the previous beat ended, so beats never overlap.
 */
export function createHeartbeatLoop(common: Common, options: HeartbeatLoopOptions): HeartbeatLoop {
  const { sink } = options;
  const logger = common.logger.child({ sink: sink.name });
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let lastLogged: string | undefined;

  /** Logs a change of what the beats do (pinging, not ready, failing), not every beat. */
  function note(outcome: BeatOutcome): void {
    const key = outcome.pinged ? "pinged" : outcome.reason;
    if (key === lastLogged) return;
    lastLogged = key;
    if (outcome.pinged) logger.info({ status: outcome.status }, "heartbeat: pinging while ready");
    else if (outcome.reason === "not_ready") logger.warn({}, "heartbeat: not ready, pings stopped until /readyz says ready again");
    else if (outcome.reason === "failed") logger.warn({ err: outcome.error }, "heartbeat: the ping failed; the next one comes at the next interval");
  }

  /** One beat, counted by outcome (kaiawatch_heartbeat_pings_total); a beat cut short by stop() is not counted. */
  async function beat(): Promise<BeatOutcome> {
    const outcome = await beatOnce();
    const label = outcome.pinged ? "ok" : outcome.reason;
    if (label !== "stopped") common.metrics.heartbeatPings.inc({ sink: sink.name, outcome: label });
    return outcome;
  }

  async function beatOnce(): Promise<BeatOutcome> {
    if (controller.signal.aborted) return { pinged: false, reason: "stopped" };
    // Readiness first, holder or not: with replicas each one publishes its verdict for the holder.
    let ready: boolean;
    try {
      ready = await options.ready();
    } catch {
      ready = false;
    }
    if (!options.holds()) return { pinged: false, reason: "not_holder" };
    if (!ready) return { pinged: false, reason: "not_ready" };
    try {
      const { status } = await sink.ping(controller.signal);
      return { pinged: true, status };
    } catch (error) {
      if (controller.signal.aborted) return { pinged: false, reason: "stopped" };
      return { pinged: false, reason: "failed", error: common.secrets.redact(describeError(error)) };
    }
  }

  function schedule(): void {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      running = beat().then(note, () => undefined).finally(schedule);
    }, sink.intervalMs);
    timer.unref();
  }

  return {
    name: sink.name,
    start: schedule,
    beat: async () => {
      const outcome = await beat();
      note(outcome);
      return outcome;
    },
    async stop() {
      controller.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
