import type { Server } from "node:http";
import { Worker } from "node:worker_threads";
import type { Logger } from "../common/logger.js";
import { FRONT_DOOR_THREAD, type FrontDoorThreadData, type ToMain, type ToThread } from "./front-door-thread.js";
import { RelayedSocket } from "./relayed-socket.js";

export interface FrontDoorOptions extends Omit<FrontDoorThreadData, "headers"> {
  /** The main thread's HTTP server: every connection relayed is given to it. */
  server: Server;
  headers: Readonly<Record<string, string>>;
  logger: Logger;
}

export interface FrontDoor {
  /** The address listened on (the real port when 0 was asked for). */
  readonly address: { address: string; family: string; port: number };
  /** Stops listening, closes every connection and ends the thread. */
  close(): Promise<void>;
}

/** A listen that failed (EADDRINUSE, …), as node would have thrown it. */
export class FrontDoorListenError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The status server's listening socket, held by a thread of its own (front-door-thread.ts),
 * so that /healthz and /readyz answer with a failure when the main thread is held (a store
 * write on a frozen disk: better-sqlite3 is synchronous) instead of not at all. While the main
 * thread turns, every connection is relayed to `server`, which answers as it did when it
 * listened itself (its timeouts, Host check, routes and tokens are unchanged).
 */
export async function openFrontDoor(options: FrontDoorOptions): Promise<FrontDoor> {
  const { server, logger } = options;
  // The HTTP server tracks its connections (for its header and request timeouts, and for
  // closeAllConnections) from its 'listening' event; it never listens itself here.
  server.emit("listening");
  const data: FrontDoorThreadData = {
    host: options.host,
    port: options.port,
    maxConnections: options.maxConnections,
    requestTimeoutMs: options.requestTimeoutMs,
    beacon: options.beacon,
    frozenAfterMs: options.frozenAfterMs,
    headers: { ...options.headers },
  };
  const worker = new Worker(FRONT_DOOR_THREAD, { eval: true, workerData: data });
  const post = (message: ToThread, transfer?: ArrayBuffer[]) => worker.postMessage(message, transfer);
  const sockets = new Map<number, RelayedSocket>();
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));

  const address = await new Promise<FrontDoor["address"]>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    worker.once("error", onError);
    worker.on("message", (message: ToMain) => {
      switch (message.type) {
        case "listening":
          worker.off("error", onError);
          resolve(message.address);
          return;
        case "listen-error":
          reject(new FrontDoorListenError(message.code, message.message));
          return;
        case "open": {
          const socket = new RelayedSocket(message.id, post, message);
          sockets.set(message.id, socket);
          socket.on("close", () => sockets.delete(message.id));
          server.emit("connection", socket);
          return;
        }
        case "data":
          sockets.get(message.id)?.received(message.chunk);
          return;
        case "end":
          sockets.get(message.id)?.push(null);
          return;
        case "timeout":
          sockets.get(message.id)?.emit("timeout");
          return;
        case "close":
          sockets.get(message.id)?.destroy();
          return;
      }
    });
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  worker.on("error", (error) => logger.error({ err: error }, "the status server's thread failed: the status server no longer answers"));

  return {
    address,
    async close() {
      for (const socket of sockets.values()) socket.destroy();
      // Ending the thread closes its sockets, the listening one first; left to end by itself,
      // it took a second to wind down (measured), which every stop would wait for.
      await worker.terminate();
      await exited;
    },
  };
}
