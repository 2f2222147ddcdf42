import { resolve } from "node:path";
import type { Common } from "../common/common.js";
import type { Backend } from "./backend.js";
import { openSqliteStore, defaultReplicaId, type OpenStoreOptions } from "./open-store.js";
import { createSoleOwnership } from "./ownership.js";
import { ensureStoreFolderWritable } from "./store-folder.js";
import { acquireStoreLock } from "./store-lock.js";
import { createLeaseKeeper } from "./postgres/lease-keeper.js";
import { createPostgresStore } from "./postgres/postgres-store.js";

export type { OpenStoreOptions as OpenBackendOptions } from "./open-store.js";
export { processUser } from "./store-folder.js";

/**
 * What `doctor` checks of the configured store without opening it: for the file store, that its
 * folder exists or can be made, a file can be created and written in it, and the lock can be
 * taken (let go at once). Throws the StoreError the daemon's start would (KW_STORE_NOT_WRITABLE,
 * KW_STORE_LOCKED). PostgreSQL is not probed: the daemon connects at start.
 */
export async function probeStoreWrites(common: Common, options: OpenStoreOptions): Promise<{ kind: "postgres" } | { kind: "file"; path: string }> {
  if (options.url !== undefined) return { kind: "postgres" };
  const path = resolve(options.path);
  await ensureStoreFolderWritable(path);
  const lock = await acquireStoreLock(path, common.logger.child({ subsystem: "store" }));
  await lock.release();
  return { kind: "file", path };
}

/**
 * Opens the configured backend: PostgreSQL shared by replicas with `url`, else the SQLite file
 * at `path`. The only place that knows which class it is.
 */
export async function openBackend(common: Common, options: OpenStoreOptions): Promise<Backend> {
  if (options.url === undefined) {
    const store = await openSqliteStore(common, options);
    return {
      store,
      silences: store.silences,
      // One process holds the file's lock: it owns every resource.
      ownership: () => createSoleOwnership("local"),
      close: () => store.close(),
    };
  }
  const replicaId = options.replicaId ?? defaultReplicaId();
  const store = await createPostgresStore(common, {
    url: options.url,
    replicaId,
    leaseMs: options.leaseMs,
    readOnly: options.readOnly,
    silencesWritable: options.silencesWritable,
    timeouts: options.timeouts,
  });
  return {
    store,
    silences: store.silences,
    replicas: { selfId: replicaId, list: () => store.leases.replicas() },
    ownership: (ownershipCommon, ownershipOptions) =>
      createLeaseKeeper(ownershipCommon, {
        leases: store.leases,
        replicaId,
        leaseMs: options.leaseMs ?? 10_000,
        info: ownershipOptions.info,
        onChange: ownershipOptions.onChange,
        // The next holder of a lease starts where this replica got to.
        flush: () => store.flush(),
      }),
    close: () => store.close(),
  };
}
