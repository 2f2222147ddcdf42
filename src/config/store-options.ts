import type { OpenStoreOptions } from "../store/open-store.js";
import type { StoreConfig } from "./types.js";

/** How to open the configured store: the file at `path`, or PostgreSQL at `url` as this replica. */
export function storeOptionsOf(store: StoreConfig): OpenStoreOptions {
  return store.url === undefined ? { path: store.path } : { path: store.path, url: store.url, replicaId: store.replica_id, leaseMs: store.lease };
}
