/**
 * The simulator in a process of its own, driven over IPC. A benchmark that measures
 * kaiawatch's side of the wire runs the explorer elsewhere, as the real one is: the
 * simulator's JSON serialisation then competes for a core as a remote server's would not
 * compete for kaiawatch's, instead of sharing kaiawatch's event loop.
 *
 * Parent: `startSimulatorProcess(options)`. Child: this file, forked with
 * KAIAWATCH_BENCH_SIMULATOR set to the options as JSON.
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SimulatorAddresses, SimulatorOptions, SimulatorStats } from "../src/simulator/index.js";

const ENV = "KAIAWATCH_BENCH_SIMULATOR";

export interface ProcessSimulatorOptions extends SimulatorOptions {
  /** Mine blocks (100 at a time) until the chain holds at least this many records. */
  growToRecords?: number;
}

/** Counts of ground-truth records, by the simulator's `truth` functions. */
export type TruthQuery =
  | { fn: "accountEventLogs" | "accountNftTransfers" | "nftTransfers" | "accountInternalTransactions"; address: string; from: number; to: number }
  | { fn: "recordCount" };

export interface RemoteSimulator {
  url: string;
  rpcUrl: string;
  addresses: SimulatorAddresses;
  pid: number;
  head(): Promise<number>;
  mine(count: number): Promise<number>;
  stats(): Promise<SimulatorStats>;
  resetStats(): Promise<void>;
  count(query: TruthQuery): Promise<number>;
  /** Resident memory of the simulator's process, bytes. */
  rss(): Promise<number>;
  close(): Promise<void>;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

export async function startSimulatorProcess(options: ProcessSimulatorOptions): Promise<RemoteSimulator> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, [ENV]: JSON.stringify(options) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.on("exit", (code) => {
    for (const { reject } of waiting.values()) reject(new Error(`simulator process exited (${code})`));
    waiting.clear();
  });
  const ready = new Promise<{ url: string; rpcUrl: string; addresses: SimulatorAddresses }>((resolve, reject) => {
    child.once("message", (message) => resolve(message as { url: string; rpcUrl: string; addresses: SimulatorAddresses }));
    child.once("exit", (code) => reject(new Error(`simulator process exited (${code}) before it served`)));
  });
  const info = await ready;
  child.on("message", (message) => {
    const reply = message as Reply;
    const entry = waiting.get(reply.id);
    if (!entry) return;
    waiting.delete(reply.id);
    if (reply.error !== undefined) entry.reject(new Error(reply.error));
    else entry.resolve(reply.result);
  });
  const call = <T>(method: string, ...args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, method, args });
    });
  return {
    ...info,
    pid: child.pid as number,
    head: () => call<number>("head"),
    mine: (count) => call<number>("mine", count),
    stats: () => call<SimulatorStats>("stats"),
    resetStats: () => call<void>("resetStats"),
    count: (query) => call<number>("count", query),
    rss: () => call<number>("rss"),
    async close() {
      if (child.exitCode !== null) return;
      await call("close").catch(() => undefined);
      child.disconnect();
      await exited;
    },
  };
}

/**
 * Pins this process to one CPU and the simulator's to another (taskset, every thread), when
 * this process may run on two. A separate process alone still let the two share both cores:
 * kaiawatch's extra work (its GC's helper threads among it) then took time from the
 * simulator, which every request waits for, and a ratio against a ceiling measured what
 * kaiawatch adds plus what that cost the server. A remote explorer has its own CPU; apart,
 * so does the simulator. Returns a sentence for the notes saying which it was.
 */
export function pinApart(sim: Pick<RemoteSimulator, "pid">): string {
  const cpus = allowedCpus();
  if (cpus.length < 2) return `Not pinned: this process may run on ${cpus.length === 0 ? "an unknown set of CPUs" : "one CPU"}, so the simulator shares it.`;
  const [mine, its] = cpus as [number, number];
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(its), String(sim.pid)], { stdio: "ignore" });
    execFileSync("taskset", ["-a", "-p", "-c", String(mine), String(process.pid)], { stdio: "ignore" });
  } catch (error) {
    return `Not pinned (taskset: ${(error as Error).message.split("\n")[0]}): kaiawatch and the simulator share the cores.`;
  }
  return `kaiawatch's process (both sides of every ratio) pinned to CPU ${mine}, the simulator's to CPU ${its} (taskset), as a remote explorer has a CPU of its own.`;
}

/** The CPUs this process may run on (Linux's Cpus_allowed_list, "0-1,4"); empty elsewhere. */
function allowedCpus(): number[] {
  let list: string | undefined;
  try {
    list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  } catch {
    return [];
  }
  if (list === undefined) return [];
  return list.split(",").flatMap((range) => {
    const [from, to = from] = range.split("-").map(Number) as [number, number?];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
}

async function serve(options: ProcessSimulatorOptions): Promise<void> {
  const { createSimulator } = await import("../src/simulator/index.js");
  const { growToRecords, ...simOptions } = options;
  const sim = await createSimulator(simOptions);
  if (growToRecords !== undefined) while (sim.truth.recordCount() < growToRecords) sim.mine(100);
  const send = (message: unknown) => process.send?.(message);
  process.on("message", (message) => {
    const { id, method, args } = message as { id: number; method: string; args: unknown[] };
    const reply = (result: unknown) => send({ id, result });
    switch (method) {
      case "head":
        return reply(sim.head());
      case "mine":
        sim.mine(args[0] as number);
        return reply(sim.head());
      case "stats":
        return reply(sim.stats());
      case "resetStats":
        sim.resetStats();
        return reply(undefined);
      case "rss":
        return reply(process.memoryUsage().rss);
      case "count": {
        const q = args[0] as TruthQuery;
        if (q.fn === "recordCount") return reply(sim.truth.recordCount());
        return reply(sim.truth[q.fn](q.address, { from: q.from, to: q.to }).length);
      }
      case "close":
        void sim.close().then(() => {
          reply(undefined);
          process.exit(0);
        });
        return;
      default:
        send({ id, error: `unknown method ${method}` });
    }
  });
  process.on("disconnect", () => void sim.close().then(() => process.exit(0)));
  send({ url: sim.url, rpcUrl: sim.rpcUrl, addresses: sim.addresses });
}

const childOptions = process.env[ENV];
if (childOptions !== undefined && process.send !== undefined) {
  await serve(JSON.parse(childOptions) as ProcessSimulatorOptions);
}
