import type { Common } from "../common/common.js";
import type { Backend } from "./backend.js";
import { openSqliteStore, defaultReplicaId, type OpenStoreOptions } from "./open-store.js";
import { createSoleOwnership } from "./ownership.js";
import { createLeaseKeeper } from "./postgres/lease-keeper.js";
import { createPostgresStore } from "./postgres/postgres-store.js";

export type { OpenStoreOptions as OpenBackendOptions } from "./open-store.js";

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
