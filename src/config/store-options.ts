import type { OpenBackendOptions } from "../store/open-backend.js";
import type { StoreConfig } from "./types.js";
import { DEFAULT_STORE_PATH, LEGACY_DEFAULT_STORE_PATH } from "./schema.js";

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
    // The default path's earlier name: a store found under it is renamed once (open-store.ts).
    ...(store.path === DEFAULT_STORE_PATH ? { renameFrom: LEGACY_DEFAULT_STORE_PATH } : {}),
  };
}
