import type { Common } from "../common/common.js";
import type { Config } from "../config/types.js";
import { createHeadReader, type HeadReader } from "../chain/head.js";
import { indexedHead } from "../chain/indexed-head.js";
import { createJsonRpc } from "../chain/json-rpc.js";
import { createTokenInfoCache } from "../chain/token-info.js";
import { readConfigTokens } from "../watch/config-tokens.js";
import { rpcOptionsOf } from "../watch/rpc-options.js";
import { balanceResource, createBalanceMonitor } from "../watch/balance-monitor.js";
import { balanceWatchesOf } from "../watch/balance-watches.js";
import { balanceWatchViews } from "../watch/balance-status.js";
import { createExplorerClient, type ExplorerClient } from "../explorer/client.js";
import { ExplorerPlanError } from "../explorer/errors.js";
import { createSink } from "../notify/create-sink.js";
import { deliverDirectly } from "../notify/direct-delivery.js";
import { createDispatcher, type Dispatcher, type DrainResult } from "../notify/dispatcher.js";
import { createSilenceBook, type SilenceBook } from "../notify/silences.js";
import type { Sink } from "../notify/sink.js";
import { createEnricher } from "../rules/enrich.js";
import { storeOptionsOf } from "../config/store-options.js";
import type { Backend, Replicas } from "../store/backend.js";
import { openBackend } from "../store/open-backend.js";
import { type Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import { readMeta, writeMeta } from "../store/meta-slot.js";
import type { Store, StoreFaults } from "../store/types.js";
import { createStallBeacon, type StallBeacon } from "../common/stall-beacon.js";
import { creditsSlot } from "./credits-slot.js";
import { createWatchEngine, type OnceResult, type WatchEngine } from "../watch/engine.js";
import { NORMALIZERS } from "../watch/normalize.js";
import type { Plan } from "../watch/plan.js";
import { planFromConfig } from "../watch/plan-from-config.js";
import { createSourcePoller } from "../watch/poller.js";
import { createProgress, type Progress } from "../common/progress.js";
import { blocksInFlightFor } from "../watch/fetch-window.js";
import type { RecountPolicy } from "../watch/fetch-window.js";
import { explorerOptionsOf } from "./explorer-options.js";
import { paginateSource } from "./paginate-source.js";
import { paginateBlockTransactions } from "../watch/paginate-transactions.js";
import { createTransactionsReader } from "../watch/transactions-reader.js";
import { isNodeOperation } from "../watch/source.js";
import { createDaemonStatus, type ReplicaView } from "../status/daemon-status.js";
import { createStatusServer, type StatusServer } from "../status/status-server.js";
import { loadOrCreateWriteToken } from "../status/write-token.js";
import { createBudgetGuard, type BudgetGuard } from "./budget-guard.js";
import { createHeadProbe } from "./head-probe.js";
import { createHeartbeatLoop, type HeartbeatLoop } from "./heartbeat-loop.js";
import { isHeartbeatSink } from "../notify/sinks/heartbeat.js";
import { createReadiness } from "../status/readiness.js";
import { createHealthMonitor, type HealthMonitor } from "./health-monitor.js";
import { createOperationalMonitor } from "./operational-monitor.js";
import { createReplicaHealth, strings, type ReplicaHealth } from "./replica-health.js";

/** The lease of the replica that judges kaiawatch's own health and sends its operational alerts. */
export const OPERATIONAL_RESOURCE = leaseResource("operational");
const CREDITS_SAVE_INTERVAL_MS = 10_000;

/** Every subsystem of a running kaiawatch, built from one validated config. */
export interface Daemon {
  readonly config: Config;
  readonly plan: Plan;
  readonly store: Store;
  readonly client: ExplorerClient;
  readonly engine: WatchEngine;
  readonly dispatcher: Dispatcher;
  /** Active silences (`kaiawatch silence`), read from the store. */
  readonly silences: SilenceBook;
  /** The daily credit budget's pause (its alerts are operational conditions: credits_low, credits_exhausted). */
  readonly budget: BudgetGuard;
  /** Which sources and sinks this process works on: all of them, or its leases with PostgreSQL replicas. */
  readonly ownership: Ownership;
  /** Source states, readiness and kaiawatch's operational alerts. */
  readonly health: HealthMonitor;
  /** One per heartbeat sink: pings its URL every interval while ready (the dead man's switch). */
  readonly heartbeats: readonly HeartbeatLoop[];
  /**
   * Resolves at the first tick refused because the key's plan lacks its operation (HTTP 403,
   * operation 7 on a FREE key): `run` then plans again without that operation. Never rejects.
   */
  readonly planRefused: Promise<ExplorerPlanError>;
  /**
   * Start the status server (when `status.listen` is set; a port in use rejects with
   * KW_STATUS_LISTEN before anything else starts), then schedule every source and start delivering.
   */
  start(): Promise<void>;
  /** The status server's address while it runs (e.g. http://127.0.0.1:9464). */
  statusUrl(): string | undefined;
  /** One pass over every source up to the head, then deliver what is due (`kaiawatch once`). */
  runOnce(options?: { drainTimeoutMs?: number }): Promise<{ scan: OnceResult; delivery: DrainResult }>;
  /** Stop ticks and deliveries, finish the write in flight, release the store. */
  stop(): Promise<void>;
}

export interface DaemonOptions {
  config: Config;
  /** Replaces the built sinks by name (tests and the demo's in-process receivers). */
  sinks?: Record<string, Sink>;
  /** When a range is fetched again because its records disagree with `total_count` (tests shorten the waits). */
  recount?: Partial<RecountPolicy>;
  /** Operation 8's blocks asked for at once; default blocksInFlightFor(explorer.requests_per_second). The catch-up benchmark sets 1 for its baseline. */
  blocksInFlight?: number;
  /** Waits until the next head read of the `schedule: head` sources (tests step it by hand); default chain.head_interval. */
  waitForHead?: (signal: AbortSignal) => Promise<void>;
  /** Where catch-ups report progress (`once` on a terminal draws a line); default: info logs every few seconds. */
  progress?: Progress;
  /**
   * The main thread's beacon, which the store stamps around each write and the status server's
   * thread reads (a frozen disk fails /healthz); default one on the real clock. Tests give one
   * on a virtual clock.
   */
  beacon?: StallBeacon;
  /** Tests: faults injected into the file store's writes (a write that holds the thread). */
  storeFaults?: StoreFaults;
}

export async function createDaemon(common: Common, options: DaemonOptions): Promise<Daemon> {
  const { config } = options;
  const logger = common.logger;
  // A store write holds the main thread (SQLite is synchronous): the store says when one
  // starts and ends, and the status server's thread answers /healthz with 503 past status.frozen_after.
  const beacon = options.beacon ?? createStallBeacon({ frozenAfterMs: config.status.frozen_after, logger });
  const backend: Backend = await openBackend(common, { ...storeOptionsOf(config.store), writeBeacon: beacon, faults: options.storeFaults });
  const { store, replicas } = backend;
  const closers: Array<() => Promise<void>> = [];
  try {
    const client = createExplorerClient(common, { ...explorerOptionsOf(config), replicaId: replicas?.selfId });
    closers.push(() => client.close());
    // The day's spending survives restarts, or a restart would reset the budget.
    // Replicas: each keeps its own day's spending (credits.<replica>), and the budget counts them all.
    const credits = creditsSlot(replicas?.selfId);
    const savedCredits = await readMeta(store, credits);
    if (savedCredits) client.meter.restore(savedCredits);

    // One JSON-RPC client for the head and the token reads: one pool, one count.
    const rpc = createJsonRpc(common, rpcOptionsOf(config));
    closers.push(() => rpc.close());
    const head: HeadReader = createHeadReader(common, { rpcUrl: config.chain.rpc_url, rpc });
    closers.push(() => head.close());
    // Before the plan: a token watch's rules are compiled in its tokens' units, and a
    // contract that is not a token is a config error before anything runs.
    const tokens = await readConfigTokens(config, createTokenInfoCache(rpc));

    const built = Object.entries(config.sinks).map(([name, sinkConfig]) => {
      const sink = options.sinks?.[name] ?? createSink(common, name, sinkConfig);
      return { sink, concurrency: sinkConfig.concurrency, ratePerSecond: sinkConfig.rate_per_second, maxAttempts: sinkConfig.max_attempts, maxAgeMs: sinkConfig.max_age };
    });
    closers.push(async () => {
      await Promise.allSettled(built.map(({ sink }) => sink.close?.()));
    });
    // Heartbeat sinks receive no alerts (the config refuses them in notify:): the dispatcher never sees them.
    const sinks = built.filter(({ sink }) => !isHeartbeatSink(sink));
    const heartbeatSinks = built.map(({ sink }) => sink).filter(isHeartbeatSink);
    // The silences are rows of the store, which `kaiawatch silence` and every replica write too.
    const silences = await createSilenceBook(common, { silences: backend.silences });
    // Replicas publish what they judge of the sources they hold in their heartbeats, for the
    // one that sends the operational alerts (replica-health.ts).
    const replicaHealth: ReplicaHealth | undefined = replicas === undefined ? undefined : createReplicaHealth({ replicaId: replicas.selfId, replicas: () => replicas.list() });
    // Replicas lease the sources and sinks (one process owns them all); a sink gained is delivered at once.
    // Each replica's readiness at its last heartbeat beat, for the one holding the heartbeat sink.
    let readyNow = false;
    const ownership: Ownership = backend.ownership(common, { info: replicaHealth && (() => ({ ...replicaHealth.info(), ready: readyNow })), onChange: () => dispatcher.kick() });
    if (replicas !== undefined) common.metrics.registry.setDefaultLabels({ replica: replicas.selfId });
    const dispatcher = createDispatcher(common, {
      store,
      ownership,
      retentionMs: config.store.retention,
      silences,
      sinks,
      rules: config.rules.map((rule) => ({
        name: rule.name,
        group: rule.group && { windowMs: rule.group.window, max: rule.group.max, by: rule.group.by },
        cooldownMs: rule.cooldown,
        cooldownKey: rule.cooldown_key,
      })),
    });

    const plan = planFromConfig(config, { tokens });
    const balanceWatches = balanceWatchesOf(config, tokens);
    for (const name of plan.idleWatches) logger.warn({ watch: name }, "no rule reads this watch: it is not polled");
    if (!plan.rate.fits) logger.warn({ requests_per_second: plan.rate.requestsPerSecond, limit: plan.rate.limit, steady_limit: plan.rate.steadyLimit }, "the sources need more than half of explorer.requests_per_second, which is kept for catching up (see kaiawatch plan)");
    const resources = [
      ...plan.sources.map((source) => leaseResource({ source: source.key })),
      ...built.map(({ sink }) => leaseResource({ sink: sink.name })),
      // Held like sources: one replica reads a balance watch and writes its episodes.
      ...balanceWatches.map((watch) => balanceResource(watch.name)),
      OPERATIONAL_RESOURCE,
    ];
    let ownershipStarted = false;

    // One enricher for the run: its cache serves every source (the same transaction can match in several).
    const enricher = createEnricher(common, { client });
    // The transactions source reads the node: one reader for it, through the shared JSON-RPC client (its rate limit).
    const transactions = createTransactionsReader(common, config, rpc);
    // Catch-ups report their progress: info logs every few seconds, or a terminal line (`once`).
    const progress = options.progress ?? createProgress({ now: common.now, logger: common.logger });
    const pollers = plan.sources.map((source) =>
      createSourcePoller(common, {
        source,
        store,
        paginate: isNodeOperation(source.definition.operation) ? paginateBlockTransactions(transactions) : paginateSource(client, source.definition, config.explorer.page_size),
        normalize: NORMALIZERS[source.family],
        pageSize: config.explorer.page_size,
        enrich: source.rules.some((rule) => (rule.enrich ?? []).length > 0) ? enricher.enrich : undefined,
        onAlerts: () => dispatcher.kick(),
        recount: options.recount,
        blocksInFlight: options.blocksInFlight ?? blocksInFlightFor(isNodeOperation(source.definition.operation) ? config.chain.requests_per_second : config.explorer.requests_per_second),
        progress,
      }),
    );
    const lagBlocks = config.chain.lag_blocks;
    const headProbe = createHeadProbe(async (signal) => indexedHead(await head.blockNumber(signal), lagBlocks), common.now);
    const operationalSinks = Object.values(config.sinks).filter((sink) => sink.operational).map((sink) => sink.name);
    const budget = await createBudgetGuard(common, { meter: client.meter, store });
    let refusePlan: (error: ExplorerPlanError) => void = () => {};
    const planRefused = new Promise<ExplorerPlanError>((resolve) => (refusePlan = resolve));
    const balances = createBalanceMonitor(common, {
      rpc,
      store,
      ownership,
      watches: balanceWatches,
      tokens,
      network: config.chain.network,
      explorerUrl: config.chain.explorer_url,
      readHead: (signal) => head.blockNumber(signal),
      onQueued: () => dispatcher.kick(),
    });
    const engine = createWatchEngine(common, {
      pollers,
      readHead: headProbe.read,
      jitterMs: config.defaults.jitter,
      tickTimeoutMs: config.defaults.tick_timeout,
      headIntervalMs: config.chain.head_interval,
      waitForHead: options.waitForHead,
      pause: {
        paused: () => budget.paused(),
        pausedBy(error) {
          if (error instanceof ExplorerPlanError) refusePlan(error);
          return budget.pausedBy(error);
        },
      },
      ownership,
      // One write per firing for the cursor advances of windows without alerts.
      flush: () => store.flush(),
    });
    const health = createHealthMonitor(common, {
      thresholds: config.operational,
      sources: plan.sources,
      engine,
      store,
      sinks: sinks.map(({ sink }) => sink.name),
      head: headProbe,
      budget,
      // Replicas judge the sources they hold; with one process every source.
      holds: replicas === undefined ? undefined : (key) => ownership.holds(leaseResource({ source: key })) !== undefined,
      shared: replicaHealth,
      monitor: await createOperationalMonitor(common, {
        store,
        sinks: operationalSinks,
        network: config.chain.network,
        head: () => headProbe.state().block,
        onQueued: () => dispatcher.kick(),
        // A damaged store's alert cannot go through the outbox, which is in the damaged file.
        sendDirectly: async (alert) => void (await deliverDirectly(common, built.map(({ sink }) => sink).filter((sink) => operationalSinks.includes(sink.name)), alert)),
      }),
    });
    const readiness = createReadiness({ store, health });
    const heartbeats = heartbeatSinks.map((sink) =>
      createHeartbeatLoop(common, {
        sink,
        async ready() {
          readyNow = (await readiness()).ready;
          if (readyNow || replicas === undefined) return readyNow;
          // With replicas the holder pings while any live replica is ready (its last published verdict).
          return (await replicas.list()).some((replica) => replica.live && replica.id !== replicas.selfId && replica.info.ready === true);
        },
        holds: () => ownership.holds(leaseResource({ sink: sink.name })) !== undefined,
      }),
    );
    let healthTimer: NodeJS.Timeout | undefined;
    // With replicas, whether this replica sent the operational alerts at the last check: one that
    // starts sending takes the episodes from the store first (health.resume()). One process
    // sends from its start, with the episodes it loaded then.
    let sending = replicas === undefined;
    // When the health check in progress started (undefined: none runs), and whether one was skipped since it.
    let checkStarted: number | undefined;
    let checkLate = false;
    let statusServer: StatusServer | undefined;

    let creditTimer: NodeJS.Timeout | undefined;
    const saveCredits = async () => {
      await writeMeta(store, credits, client.meter.snapshot());
      if (replicas !== undefined) client.meter.setSpentElsewhere(await spentByOthers(store, replicas, client.meter.snapshot().day));
    };

    return {
      config,
      plan,
      store,
      client,
      engine,
      dispatcher,
      silences,
      budget,
      ownership,
      health,
      heartbeats,
      planRefused,
      statusUrl: () => statusServer?.url,
      async start() {
        if (config.status.listen !== false) {
          const views = replicas === undefined ? undefined : () => replicaViews(replicas);
          // Who reads each balance watch: this process, or the replica whose heartbeat lists it.
          const holders = async (): Promise<Map<string, string>> =>
            replicas === undefined
              ? new Map(balanceWatches.map((watch) => [watch.name, ownership.replicaId]))
              : new Map((await replicaViews(replicas)).flatMap((replica) => replica.balances.map((watch) => [watch, replica.id] as const)));
          const balanceViews = balanceWatches.length === 0 ? undefined : () => balanceWatchViews(store, balanceWatches, holders);
          const provider = createDaemonStatus(common, { sources: plan.sources, store, engine, dispatcher, meter: client.meter, head: headProbe, budget, health, silences, replicas: views, balances: balanceViews, replicaId: replicas?.selfId, explorerUrl: config.chain.explorer_url });
          // Writes need a token unless the operator trusts this machine: status.token, or one made at the first start.
          // Not where replicas share the store: the commands write to the database itself, so the
          // file would serve nobody; the replicas' write API then needs status.token.
          const writeToken = config.status.token === undefined && !config.status.trust_loopback && replicas === undefined ? loadOrCreateWriteToken(config.status.write_token_file) : undefined;
          statusServer = await createStatusServer(common, { listen: config.status.listen, token: config.status.token, writeToken, trustLoopback: config.status.trust_loopback, allowedHosts: config.status.allowed_hosts, provider, beacon, frozenAfterMs: config.status.frozen_after });
        }
        await ownership.start(resources);
        ownershipStarted = true;
        healthTimer = setInterval(() => {
          // With replicas, one of them (the holder of this lease) sends the operational alerts:
          // their episodes are shared in the store, and two senders would open each twice.
          // The others judge the sources they hold, for their next heartbeat, which it reads.
          if (ownership.holds(OPERATIONAL_RESOURCE) === undefined) {
            sending = false;
            return health.judgeSources();
          }
          // One check at a time: on a store that does not answer they piled up, and finished
          // out of order once it did (a later check's verdicts undone by an older one's).
          if (checkStarted !== undefined) {
            if (!checkLate) logger.warn({ running_ms: common.now() - checkStarted }, "kaiawatch's own health check is still waiting for the store; the next checks are skipped until it ends");
            checkLate = true;
            return;
          }
          checkStarted = common.now();
          const resumed = sending ? Promise.resolve() : health.resume().then(() => void (sending = true));
          resumed
            .then(() => health.check())
            .then(() => void (checkLate = false))
            .catch((error: unknown) => logger.warn({ err: String(error) }, "cannot check kaiawatch's own health; tried again at the next check"))
            .finally(() => (checkStarted = undefined));
        }, config.operational.check_interval);
        healthTimer.unref();
        dispatcher.start();
        for (const heartbeat of heartbeats) heartbeat.start();
        silences.start();
        engine.start();
        await balances.start();
        creditTimer = setInterval(() => {
          saveCredits().catch((error: unknown) => logger.warn({ err: String(error) }, "cannot save the credit meter"));
        }, CREDITS_SAVE_INTERVAL_MS);
        creditTimer.unref();
      },
      async runOnce(runOptions = {}) {
        if (!ownershipStarted) {
          await ownership.start(resources);
          ownershipStarted = true;
        }
        const scan = await engine.runOnce();
        await balances.runOnce();
        const delivery = await dispatcher.drain({ timeoutMs: runOptions.drainTimeoutMs ?? 30_000 });
        return { scan, delivery };
      },
      async stop() {
        await statusServer?.close();
        statusServer = undefined;
        clearInterval(healthTimer);
        clearInterval(creditTimer);
        // First: a daemon that is stopping is not ready, and must not ping while it stops.
        await Promise.all(heartbeats.map((heartbeat) => heartbeat.stop()));
        await engine.stop();
        await balances.stop();
        await dispatcher.stop();
        // After the last commit and delivery: the others take over at once, not after a lease.
        if (ownershipStarted) await ownership.stop();
        silences.stop();
        await saveCredits().catch(() => undefined);
        for (const close of closers.reverse()) await close().catch(() => undefined);
        await backend.close();
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await backend.close();
    throw error;
  }
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

/** What the other replicas (every one that has a heartbeat row) say they spent on `day`. */
async function spentByOthers(store: Store, replicas: Replicas, day: string): Promise<number> {
  let spent = 0;
  for (const replica of await replicas.list()) {
    if (replica.id === replicas.selfId) continue;
    const state = await readMeta(store, creditsSlot(replica.id));
    if (state?.day === day) spent += state.spent;
  }
  return spent;
}
