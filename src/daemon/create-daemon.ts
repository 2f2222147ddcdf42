import type { Common } from "../common/common.js";
import type { Config } from "../config/types.js";
import { compiledOf, type CompiledConfig } from "../config/compile-config.js";
import { createHeadReader, type HeadReader } from "../chain/head.js";
import { indexedHead } from "../chain/indexed-head.js";
import { createJsonRpc } from "../chain/json-rpc.js";
import { createTokenInfoCache } from "../chain/token-info.js";
import { readConfigTokens } from "../watch/config-tokens.js";
import { rpcOptionsOf } from "../watch/rpc-options.js";
import { balanceResource, createBalanceMonitor } from "../watch/balance-monitor.js";
import { balanceWatchesOf } from "../watch/balance-watches.js";
import { createExplorerClient, type ExplorerClient } from "../explorer/client.js";
import { ExplorerPlanError } from "../explorer/errors.js";
import { dispatcherRulesOf } from "./dispatcher-rules.js";
import { createDispatcher, type Dispatcher, type DrainResult } from "../notify/dispatcher.js";
import { createSilenceBook, type SilenceBook } from "../notify/silences.js";
import { createInhibitor, type Inhibitor } from "../notify/inhibitor.js";
import { readFiringSources } from "./firing-sources.js";
import type { Sink } from "../notify/sink.js";
import { storeOptionsOf } from "../config/store-options.js";
import type { Backend } from "../store/backend.js";
import { openBackend } from "../store/open-backend.js";
import { type Ownership } from "../store/ownership.js";
import { leaseResource } from "../store/resources.js";
import type { Store, StoreFaults } from "../store/types.js";
import { createStallBeacon, type StallBeacon } from "../common/stall-beacon.js";
import { deliverDirectly } from "../notify/direct-delivery.js";
import { createWatchEngine, type OnceResult, type WatchEngine } from "../watch/engine.js";
import type { Plan } from "../watch/plan.js";
import { planFromConfig } from "../watch/plan-from-config.js";
import type { Progress } from "../common/progress.js";
import type { RecountPolicy } from "../watch/fetch-window.js";
import { explorerOptionsOf } from "./explorer-options.js";
import { createBudgetGuard, type BudgetGuard } from "./budget-guard.js";
import { createCreditsKeeper } from "./credits-keeper.js";
import { buildSinks } from "./daemon-sinks.js";
import { createLifecycle } from "./daemon-lifecycle.js";
import { startStatusServer } from "./daemon-status-server.js";
import { createHeadProbe } from "./head-probe.js";
import { createHealthLoop, OPERATIONAL_RESOURCE } from "./health-loop.js";
import { createHeartbeatLoop, type HeartbeatLoop } from "./heartbeat-loop.js";
import { createReadiness } from "../status/readiness.js";
import { createHealthMonitor, type HealthMonitor } from "./health-monitor.js";
import { createOperationalMonitor } from "./operational-monitor.js";
import { createWitnessAudit } from "./witness-audit.js";
import { planAudit } from "../watch/audit-plan.js";
import { createReplicaHealth, type ReplicaHealth } from "./replica-health.js";
import { createSourcePollers } from "./source-pollers.js";
import { repeatIntervalsOf } from "./repeat-interval.js";

export { OPERATIONAL_RESOURCE } from "./health-loop.js";

/** Every subsystem of a running kaiawatch, built from one validated config. */
export interface Daemon {
  readonly config: Config;
  /** The compile it runs, before its tokens were read (a restart on the same config hands it on). */
  readonly compiled: CompiledConfig;
  readonly plan: Plan;
  readonly store: Store;
  readonly client: ExplorerClient;
  readonly engine: WatchEngine;
  readonly dispatcher: Dispatcher;
  /** Active silences (`kaiawatch silence`), read from the store. */
  readonly silences: SilenceBook;
  /** `inhibit_rules:` and what they held back. */
  readonly inhibitor: Inhibitor;
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
  /**
   * What the loader compiled of `config` (LoadedConfig.compiled): the rules, schedules and
   * routes the daemon runs. Absent: compiled here, for a config built in code (tests, the demo).
   */
  compiled?: CompiledConfig;
  /** Replaces the built sinks by name (tests and the demo's in-process receivers). */
  sinks?: Record<string, Sink>;
  /** When a range is fetched again because its records disagree with `total_count` (tests shorten the waits). */
  recount?: Partial<RecountPolicy>;
  /** Operation 8's blocks asked for at once; default blocksInFlightFor(explorer.requests_per_second). The catch-up benchmark sets 1 for its baseline. */
  blocksInFlight?: number;
  /** Where the explorer stops counting, API_LIMITS.maxTotalCount by default: a test sets the simulator's lower, and this beside it. */
  countCap?: number;
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
  const loadedCompiled = options.compiled ?? compiledOf(config);
  const logger = common.logger;
  // A store write holds the main thread (SQLite is synchronous): the store says when one
  // starts and ends, and the status server's thread answers /healthz with 503 past status.frozen_after.
  const beacon = options.beacon ?? createStallBeacon({ frozenAfterMs: config.status.listen === false ? undefined : config.status.frozen_after, logger });
  const backend: Backend = await openBackend(common, { ...storeOptionsOf(config.store), writeBeacon: beacon, faults: options.storeFaults });
  const { store, replicas } = backend;
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
    await backend.close();
  };
  try {
    const client = createExplorerClient(common, { ...explorerOptionsOf(config), replicaId: replicas?.selfId });
    closers.push(() => client.close());
    // The day's spending survives restarts, or a restart would reset the budget.
    const credits = createCreditsKeeper(common, { store, meter: client.meter, replicas });
    await credits.restore();

    // One JSON-RPC client for the head and the token reads: one pool, one count.
    const rpc = createJsonRpc(common, rpcOptionsOf(config));
    closers.push(() => rpc.close());
    const head: HeadReader = createHeadReader(common, { rpcUrl: config.chain.rpc_url, rpc });
    closers.push(() => head.close());
    // Before the plan: a token watch's rules are compiled in its tokens' units, and a
    // contract that is not a token is a config error before anything runs.
    const compiled = await readConfigTokens(config, loadedCompiled, createTokenInfoCache(rpc));

    const built = buildSinks(common, config, options.sinks);
    closers.push(() => built.close());
    const sinks = built.delivered;
    // The silences are rows of the store, which `kaiawatch silence` and every replica write too.
    const silences = await createSilenceBook(common, { silences: backend.silences });
    // Inhibition's sources are the episodes in the store, which every replica writes.
    const inhibitor = createInhibitor({ rules: config.inhibit_rules, firing: () => readFiringSources(store) });
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
      inhibitor,
      sinks,
      ...(compiled.routes === undefined ? {} : { routes: compiled.routes }),
      rules: dispatcherRulesOf(config, loadedCompiled),
    });

    const plan = planFromConfig(config, { compiled });
    const balanceWatches = balanceWatchesOf(config, compiled);
    for (const name of plan.idleWatches) logger.warn({ watch: name }, "no rule reads this watch: it is not polled");
    if (!plan.rate.fits) logger.warn({ requests_per_second: plan.rate.requestsPerSecond, limit: plan.rate.limit, steady_limit: plan.rate.steadyLimit }, "the sources need more than half of explorer.requests_per_second, which is kept for catching up (see kaiawatch plan)");
    const resources = [
      ...plan.sources.map((source) => leaseResource({ source: source.key })),
      ...built.names.map((sink) => leaseResource({ sink })),
      // Held like sources: one replica reads a balance watch and writes its episodes.
      ...balanceWatches.map((watch) => balanceResource(watch.name)),
      OPERATIONAL_RESOURCE,
    ];

    const audit = planAudit(plan.sources); // `source: both`: its readers' witnesses, audited by the health loop
    const pollers = createSourcePollers(common, { config, plan, store, client, rpc, onAlerts: () => dispatcher.kick(), recount: options.recount, blocksInFlight: options.blocksInFlight, countCap: options.countCap, progress: options.progress, audit });
    const lagBlocks = config.chain.lag_blocks;
    const headProbe = createHeadProbe(async (signal) => indexedHead(await head.blockNumber(signal), lagBlocks), common.now);
    const operationalSinks = Object.values(config.sinks).filter((sink) => sink.operational).map((sink) => sink.name);
    const budget = await createBudgetGuard(common, { meter: client.meter, store });
    let refusePlan: (error: ExplorerPlanError) => void = () => {};
    const planRefused = new Promise<ExplorerPlanError>((resolve) => (refusePlan = resolve));
    const repeatInterval = repeatIntervalsOf(config);
    const balances = createBalanceMonitor(common, {
      rpc,
      store,
      ownership,
      watches: balanceWatches,
      tokens: compiled.tokens ?? new Map(),
      network: config.chain.network,
      explorerUrl: config.chain.explorer_url,
      readHead: (signal) => head.blockNumber(signal),
      onQueued: () => dispatcher.kick(),
      repeatInterval,
    });
    const engine = createWatchEngine(common, {
      pollers,
      schedules: compiled.schedules,
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
    const monitor = await createOperationalMonitor(common, {
      store, sinks: operationalSinks, network: config.chain.network,
      head: () => headProbe.state().block,
      onQueued: () => dispatcher.kick(),
      ...(compiled.routes === undefined ? {} : { routes: compiled.routes }),
      repeatInterval,
      // A damaged store's alert cannot go through the outbox, which is in the damaged file.
      sendDirectly: async (alert) => void (await deliverDirectly(common, sinks.map(({ sink }) => sink).filter((sink) => operationalSinks.includes(sink.name)), alert)),
    });
    const health = createHealthMonitor(common, {
      thresholds: config.operational,
      sources: plan.sources,
      schedules: compiled.schedules,
      engine,
      store,
      sinks: sinks.map(({ sink }) => sink.name),
      head: headProbe,
      budget,
      // Replicas judge the sources they hold; with one process every source.
      holds: replicas === undefined ? undefined : (key) => ownership.holds(leaseResource({ source: key })) !== undefined,
      shared: replicaHealth,
      monitor,
    });
    const readiness = createReadiness({ store, health });
    const heartbeats = built.heartbeats.map((sink) =>
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
    const listen = config.status.listen;
    const lifecycle = createLifecycle({
      ownership,
      resources,
      engine,
      balances,
      dispatcher,
      heartbeats,
      silences,
      healthLoop: createHealthLoop(common, { ownership, health, audit: audit.size === 0 ? undefined : createWitnessAudit(common, { store, plan: audit, monitor, onQueued: () => dispatcher.kick() }), replicated: replicas !== undefined, intervalMs: config.operational.check_interval }),
      credits,
      startStatus: listen === false ? undefined : () => startStatusServer(common, listen, { config, replicas, ownership, balanceWatches, sources: plan.sources, store, engine, dispatcher, meter: client.meter, head: headProbe, budget, health, silences, beacon, inhibitor }),
      close,
    });

    return { config, compiled: loadedCompiled, plan, store, client, engine, dispatcher, silences, inhibitor, budget, ownership, health, heartbeats, planRefused, ...lifecycle };
  } catch (error) {
    await close();
    throw error;
  }
}
