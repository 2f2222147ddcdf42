import { join } from "node:path";
import { createDaemon, type Daemon, type DaemonOptions } from "../../src/daemon/create-daemon.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { createSimulator, type Simulator, type SimulatorOptions } from "../../src/simulator/index.js";
import { startReceiver, type Receiver, type Received } from "../notify/receiver.js";
import { configFromText, quietCommon, tempDir } from "./harness.js";
import { startLocalFront } from "./local-front.js";
import { busyTokenToOut } from "./simulator-config.js";
import type { Common } from "../../src/common/common.js";

/**
 * One daemon in-process against the simulator, with a real webhook receiver as its sinks:
 * `out` (the rule's sink, answering what `outStatus` says) and, unless left out, `ops` (marked
 * `operational: true`, always 200). The daemon's clock is injected: the real one shifted by
 * `advance()`, so thresholds pass without waiting. Nothing is started: the test drives ticks,
 * health checks and deliveries by hand with `round()`, so no outcome waits on the wall clock.
 * A restart is `stop()` then `start()` on the same store.
 */
export interface OperationalWorld {
  sim: Simulator;
  receiver: Receiver;
  /** The JSON-RPC front the daemon reads the head through (see HeadFront). */
  front: HeadFront;
  storePath: string;
  now(): number;
  advance(ms: number): void;
  /** A new daemon on the world's store (not started); stopped by the cleanups. */
  start(options?: { common?: Partial<Common> }): Promise<Daemon>;
  /** One round as the daemon's timers would do it: a pass over the sources, a health check, the deliveries. */
  round(daemon: Daemon, options?: { mine?: number; drainTimeoutMs?: number }): Promise<void>;
  /** The operational alerts the `ops` sink received, in order. */
  received(): AlertDocument[];
}

export interface OperationalWorldOptions {
  cleanups: Array<() => Promise<void> | void>;
  /** The `operational:` section's keys, as YAML flow mapping entries (e.g. `source_failing_after: 2m`). */
  operational?: string;
  /** More `explorer:` keys (e.g. `daily_credit_budget: 30`). */
  explorer?: string;
  /** More keys of the `out` sink (e.g. `max_attempts: 1000`). */
  outSink?: string;
  /** More keys of the `ops` sink (e.g. a `secret`). */
  opsSink?: string;
  /** The status `out` answers (default 200); 400 makes dead letters, 503 retries. */
  outStatus?: (req: Received) => number;
  /** Without the operational sink (its deliveries would add to what a test counts). */
  withoutOpsSink?: boolean;
  /** A directory for the store (default a fresh temporary one). */
  storeDir?: string;
  simulator?: SimulatorOptions;
  /** e.g. a shorter recount for the explorer-behind-head condition. */
  daemon?: Omit<DaemonOptions, "config">;
}

/**
 * The chain head as the daemon reads it: the simulator's, or `head` when set (a node that
 * restarted on an older chain), or no answer at all while `down` (503), or `refusal`'s.
 */
export interface HeadFront {
  url: string;
  head: number | undefined;
  down: boolean;
  /** While set, every call is answered with this status and body (a node refusing its key: 401). */
  refusal?: { status: number; body: string };
}

export async function operationalWorld(options: OperationalWorldOptions): Promise<OperationalWorld> {
  const { cleanups } = options;
  const sim = await createSimulator({ initialBlocks: 30, ...options.simulator });
  cleanups.push(() => sim.close());
  const receiver = await startReceiver((res, req) => {
    const status = req.url === "/out" ? (options.outStatus?.(req) ?? 200) : 200;
    res.statusCode = status;
    res.end(status === 200 ? "ok" : "no");
  });
  cleanups.push(() => receiver.close());
  const front = await startHeadFront(sim.rpcUrl);
  cleanups.push(() => front.close());
  let storeDir = options.storeDir;
  if (storeDir === undefined) {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    storeDir = dir.path;
  }
  const storePath = join(storeDir, "store.json");
  let offset = 0;
  // The daemon's clock: the real one (timers and deadlines inside need it to move) shifted by the test.
  const now = () => Date.now() + offset;
  const config = configFromText(`
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0${options.explorer ? `, ${options.explorer}` : ""} }
chain: { rpc_url: ${front.front.url}, lag_blocks: 0, request_deadline: 2s }
store: { path: ${storePath} }
status: { listen: false }
operational: { ${options.operational ?? ""} }
${busyTokenToOut(sim, `schedule: "0 0 0 1 1 *", start: latest`)}
sinks:
  out: { type: webhook, url: "${receiver.url}/out", allow_http: true${options.outSink ? `, ${options.outSink}` : ""} }
${options.withoutOpsSink ? "" : `  ops: { type: webhook, url: "${receiver.url}/ops", allow_http: true, operational: true${options.opsSink ? `, ${options.opsSink}` : ""} }`}
`);
  return {
    sim,
    receiver,
    front: front.front,
    storePath,
    now,
    advance(ms) {
      offset += ms;
    },
    async start(startOptions = {}) {
      const daemon = await createDaemon(quietCommon({ now, ...startOptions.common }), { ...options.daemon, config });
      const stopOnce = daemon.stop.bind(daemon);
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        await stopOnce();
      };
      cleanups.push(stop);
      return Object.assign(daemon, { stop });
    },
    async round(daemon, roundOptions = {}) {
      // A new block each round by default, so every pass has a window to fetch (and, with a fault, to fail).
      sim.mine(roundOptions.mine ?? 1);
      // What fails (a tick, a check or a delivery on a full disk) is what the test looks at, not a reason to stop.
      await daemon.engine.runOnce().catch(() => undefined);
      await daemon.health.check().catch(() => undefined);
      await daemon.dispatcher.drain({ timeoutMs: roundOptions.drainTimeoutMs ?? 5_000 }).catch(() => undefined);
    },
    received: () => receiver.requests.filter((request) => request.url === "/ops").map((request) => JSON.parse(request.body) as AlertDocument),
  };
}

async function startHeadFront(rpcUrl: string): Promise<{ front: HeadFront; close(): Promise<void> }> {
  const front: HeadFront = { url: "", head: undefined, down: false };
  const { url, close } = await startLocalFront(rpcUrl, (req, res) => {
    if (front.refusal !== undefined) {
      res.writeHead(front.refusal.status, { "content-type": "text/plain" });
      res.end(front.refusal.body);
      return true;
    }
    if (front.down) {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("node restarting");
      return true;
    }
    const request = JSON.parse(req.body) as { id?: unknown; method?: string };
    if (front.head !== undefined && !Array.isArray(request) && request.method === "eth_blockNumber") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id ?? null, result: `0x${front.head.toString(16)}` }));
      return true;
    }
    return false;
  });
  front.url = url;
  return { front, close };
}
