import type { Common } from "../common/common.js";
import type { StallBeacon } from "../common/stall-beacon.js";
import type { Config } from "../config/types.js";
import type { Replicas } from "../store/backend.js";
import type { Ownership } from "../store/ownership.js";
import type { BalanceWatchInput } from "../watch/balance-monitor.js";
import { balanceWatchViews } from "../watch/balance-status.js";
import { createDaemonStatus, type DaemonStatusParts, type ReplicaView } from "../status/daemon-status.js";
import { createStatusServer, type StatusServer, type StatusServerOptions } from "../status/status-server.js";
import { loadOrCreateWriteToken } from "../status/write-token.js";
import { strings } from "./replica-health.js";

/** The daemon's parts /status reads; the replicas' and balance watches' views are made here. */
export type StatusServerParts = Omit<DaemonStatusParts, "replicas" | "balances" | "replicaId" | "explorerUrl" | "answerWithinMs"> & {
  config: Config;
  replicas: Replicas | undefined;
  ownership: Ownership;
  balanceWatches: readonly BalanceWatchInput[];
  /** The main thread's beacon (the store stamps its writes): the server's thread fails /healthz past status.frozen_after. */
  beacon: StallBeacon;
};

/** Starts the status server of `status.listen` (a port in use rejects with KW_STATUS_LISTEN). */
export async function startStatusServer(common: Common, listen: StatusServerOptions["listen"], parts: StatusServerParts): Promise<StatusServer> {
  const { config, replicas, ownership, balanceWatches, store } = parts;
  const views = replicas === undefined ? undefined : () => replicaViews(replicas);
  // Who reads each balance watch: this process, or the replica whose heartbeat lists it.
  const holders = async (): Promise<Map<string, string>> =>
    replicas === undefined
      ? new Map(balanceWatches.map((watch) => [watch.name, ownership.replicaId]))
      : new Map((await replicaViews(replicas)).flatMap((replica) => replica.balances.map((watch) => [watch, replica.id] as const)));
  const balanceViews = balanceWatches.length === 0 ? undefined : () => balanceWatchViews(store, balanceWatches, holders);
  const { sources, engine, dispatcher, meter, head, budget, health, silences } = parts;
  const provider = createDaemonStatus(common, { sources, store, engine, dispatcher, meter, head, budget, health, silences, replicas: views, balances: balanceViews, replicaId: replicas?.selfId, explorerUrl: config.chain.explorer_url });
  // Writes need a token unless the operator trusts this machine: status.token, or one made at the first start.
  // Not where replicas share the store: the commands write to the database itself, so the
  // file would serve nobody; the replicas' write API then needs status.token.
  const writeToken = config.status.token === undefined && !config.status.trust_loopback && replicas === undefined ? loadOrCreateWriteToken(config.status.write_token_file) : undefined;
  return createStatusServer(common, { listen, token: config.status.token, writeToken, trustLoopback: config.status.trust_loopback, allowedHosts: config.status.allowed_hosts, provider, beacon: parts.beacon, frozenAfterMs: config.status.frozen_after });
}

/** The live replicas and what each holds, from their heartbeats. */
async function replicaViews(replicas: Replicas): Promise<ReplicaView[]> {
  return (await replicas.list())
    .filter((replica) => replica.live)
    .map((replica) => ({
      id: replica.id,
      started_at: new Date(replica.startedMs).toISOString(),
      heartbeat_at: new Date(replica.heartbeatMs).toISOString(),
      sources: strings(replica.info.sources),
      sinks: strings(replica.info.sinks),
      balances: strings(replica.info.balances),
    }));
}
