import type { Config } from "../config/index.js";
import type { ExplorerClientOptions } from "../explorer/client.js";

/** The explorer client's options from a config: the daemon and every command that queries build their clients alike. */
export function explorerOptionsOf(config: Config): ExplorerClientOptions {
  return {
    baseUrl: config.explorer.base_url,
    apiKey: config.explorer.api_key,
    requestsPerSecond: config.explorer.requests_per_second,
    dailyCreditBudget: config.explorer.daily_credit_budget,
    maxRetries: config.explorer.max_retries,
    headersTimeoutMs: config.explorer.timeout,
    bodyTimeoutMs: config.explorer.timeout,
    requestDeadlineMs: config.explorer.request_deadline,
  };
}
