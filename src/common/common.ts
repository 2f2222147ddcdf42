import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import type { SecretRedactor } from "./secrets.js";
import { createSilentLogger } from "./logger.js";
import { createMetrics } from "./metrics.js";
import { createSecretRedactor } from "./secrets.js";

/**
 * What every subsystem's `createX(common, …)` receives instead of globals: the logger, the
 * metrics, the secrets to keep out of logs, and the shutdown signal that every loop and
 * wait honours.
 */
export interface Common {
  logger: Logger;
  metrics: Metrics;
  secrets: SecretRedactor;
  /** Aborted when the process is asked to stop. */
  signal: AbortSignal;
  /** Milliseconds since the epoch; replaceable in tests of time-based logic. */
  now: () => number;
}

/** A quiet Common for tests and embedding; pass a signal to stop its loops. */
export function createTestCommon(overrides: Partial<Common> = {}): Common {
  return {
    logger: createSilentLogger(),
    metrics: createMetrics(),
    secrets: createSecretRedactor(),
    signal: new AbortController().signal,
    now: Date.now,
    ...overrides,
  };
}
