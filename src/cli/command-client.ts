import { existsSync } from "node:fs";
import type { Common } from "../common/common.js";
import type { Config } from "../config/index.js";
import { CREDITS_META_KEY } from "../daemon/create-daemon.js";
import { createExplorerClient, type ExplorerClient } from "../explorer/client.js";
import type { CreditMeterState } from "../explorer/credit-meter.js";
import { openStore } from "../store/open-store.js";
import { explorerOptionsOf } from "../daemon/explorer-options.js";

/**
 * An explorer client for a command that must not take the store's lock (a daemon may be
 * running): built with the daemon's options, its meter starting from today's spending as
 * the daemon last saved it, so that the daily budget holds for the command too. The
 * command's own spending is not written back (that needs the lock).
 */
export async function openCommandClient(common: Common, config: Config): Promise<ExplorerClient> {
  const client = createExplorerClient(common, explorerOptionsOf(config));
  if (existsSync(config.store.path)) {
    try {
      const store = await openStore(common, { path: config.store.path, readOnly: true });
      const saved = await store.getMeta<CreditMeterState>(CREDITS_META_KEY);
      if (saved) client.meter.restore(saved);
      await store.close();
    } catch (error) {
      await client.close();
      throw error;
    }
  }
  return client;
}
