import type { Sink } from "./sink.js";

/** A sink as the dispatcher runs it, with its delivery limits. */
export interface DispatcherSink {
  sink: Sink;
  /** Sends of this sink in flight at once. */
  concurrency: number;
  /** Starts of sends per second (Slack: 1 per webhook); unlimited when absent. */
  ratePerSecond?: number;
  /** Failed attempts after which an alert becomes a dead letter. */
  maxAttempts: number;
  /** Age (since the alert entered the outbox) after which a failed alert becomes a dead letter. */
  maxAgeMs: number;
}
