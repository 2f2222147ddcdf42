import type { OpenBackendOptions } from "../store/open-backend.js";
import type { StoreConfig } from "./types.js";

/**
 * How to open the configured store: the file at `path`, or PostgreSQL at `url` as this
 * replica. Which of the two is the store's own business (open-backend.ts), not the caller's.
 */
export function storeOptionsOf(store: StoreConfig): OpenBackendOptions {
  return {
    path: store.path,
    url: store.url,
    replicaId: store.replica_id,
    leaseMs: store.lease,
    timeouts: { statementMs: store.statement_timeout, lockMs: store.lock_timeout, acquireMs: store.pool_timeout },
  };
}
