import type { JsonRpcOptions } from "../chain/json-rpc.js";
import type { Config } from "../config/types.js";

/**
 * The JSON-RPC client's options from a config: the daemon and every command that reads the
 * chain build their clients alike. Retries follow `explorer.max_retries`: one policy for
 * every remote call kaiawatch makes.
 */
export function rpcOptionsOf(config: Config): JsonRpcOptions {
  return {
    rpcUrl: config.chain.rpc_url,
    requestsPerSecond: config.chain.requests_per_second,
    maxRetries: config.explorer.max_retries,
    deadlineMs: config.chain.request_deadline,
  };
}
