import type { Common } from "../../common/common.js";
import type { LoadedConfig } from "../../config/index.js";
import { createDaemon, type Daemon } from "../../daemon/create-daemon.js";
import type { ExplorerClient } from "../../explorer/client.js";
import { isStoreError } from "../../store/errors.js";
import { openCommandClient } from "../command-client.js";
import { daemonApiOf, type DaemonApi } from "../daemon-api.js";
import { EXIT_RUNTIME, type CommandIO } from "../command.js";

/**
 * What `replay` fetches with and where --send queues: a daemon of its own on the store
 * (its client, store and dispatcher), or, while a daemon holds the store's lock, that
 * daemon through its status API; without --send only an explorer client.
 */
export interface ReplayTarget {
  daemon?: Daemon;
  /** With --send while a daemon holds the store: the matches are queued by that daemon, through its status API. */
  runningDaemon?: DaemonApi;
  client: ExplorerClient;
}

/** The target, or the exit code when --send can reach neither the store nor the running daemon. */
export async function openReplayTarget(common: Common, { config, compiled }: Pick<LoadedConfig, "config" | "compiled">, send: boolean, io: CommandIO): Promise<ReplayTarget | number> {
  let daemon: Daemon | undefined;
  let runningDaemon: DaemonApi | undefined;
  let client: ExplorerClient;
  if (send) {
    try {
      daemon = await createDaemon(common, { config, compiled });
      client = daemon.client;
    } catch (error) {
      if (!isStoreError(error, "KW_STORE_LOCKED")) throw error;
      const api = daemonApiOf(config);
      if ("unavailable" in api) {
        io.stderr.write(`kaiawatch replay: ${error.message}\n--send cannot ask the running daemon instead: ${api.unavailable}.\n`);
        return EXIT_RUNTIME;
      }
      runningDaemon = api;
      client = await openCommandClient(common, config);
    }
  } else {
    client = await openCommandClient(common, config);
  }
  return { daemon, runningDaemon, client };
}
