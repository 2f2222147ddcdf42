import type { Common } from "../common/common.js";
import type { Config } from "../config/index.js";
import { creditsSlot } from "../daemon/credits-slot.js";
import { createExplorerClient, type ExplorerClient } from "../explorer/client.js";
import { isStoreError } from "../store/errors.js";
import { readMeta } from "../store/meta-slot.js";
import { openBackend } from "../store/open-backend.js";
import { explorerOptionsOf } from "../daemon/explorer-options.js";

/**
 * An explorer client for a command that must not take the store's lock (a daemon may be
 * running): built with the daemon's options, its meter starting from today's spending as
 * the daemon last saved it, so that the daily budget holds for the command too. The
 * command's own spending is not written back (that needs the lock).
 */
export async function openCommandClient(common: Common, config: Config): Promise<ExplorerClient> {
  const client = createExplorerClient(common, explorerOptionsOf(config));
  try {
    // The file's meter only: replicas keep one each, and a command is none of them.
    const backend = await openBackend(common, { path: config.store.path, readOnly: true, mustExist: true });
    const saved = await readMeta(backend.store, creditsSlot());
    if (saved) client.meter.restore(saved);
    await backend.close();
  } catch (error) {
    if (isStoreError(error, "KW_STORE_MISSING")) return client;
    await client.close();
    throw error;
  }
  return client;
}
