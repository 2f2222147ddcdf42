import { BEACON_SLOTS } from "../common/stall-beacon.js";

/**
 * What the front door's thread is given (workerData): where to listen, how many connections
 * to take at once, the main thread's beacon and its bound, and what a held daemon answers.
 */
export interface FrontDoorThreadData {
  host: string;
  port: number;
  maxConnections: number;
  /** A connection answered here (the daemon is held) is cut after this long without its request. */
  requestTimeoutMs: number;
  beacon: SharedArrayBuffer;
  frozenAfterMs: number;
  /** Headers of every answer given here (the page's security headers). */
  headers: Record<string, string>;
}

/** Messages between the thread and the main thread, by connection id. */
export type ToMain =
  | { type: "listening"; address: { address: string; family: string; port: number } }
  | { type: "listen-error"; code: string | undefined; message: string }
  | { type: "open"; id: number; remoteAddress: string | undefined; remotePort: number | undefined; remoteFamily: string | undefined; localAddress: string | undefined; localPort: number | undefined }
  | { type: "data"; id: number; chunk: Uint8Array }
  | { type: "end" | "close" | "timeout"; id: number };

export type ToThread =
  | { type: "data"; id: number; chunk: Uint8Array }
  | { type: "end" | "destroy" | "pause" | "resume"; id: number }
  | { type: "timeout"; id: number; ms: number };

/**
 * The thread, as plain JavaScript given as text (as the checkpointer's: no file of its own to
 * find from the TypeScript sources under vitest or tsx, or from dist/). It owns the listening
 * socket. Each new connection, while the main thread turns, is relayed byte for byte to the
 * main thread's HTTP server, which answers everything as before; once the main thread has
 * not turned for `frozenAfterMs` (a store write on a frozen disk holds it), a new connection
 * is answered here: 503 on every path, saying what holds the daemon. Probes open a new
 * connection each time (kubelet, Docker's HEALTHCHECK, curl), so the next probe after the
 * bound gets the failure; a connection relayed before the hold waits for the main thread.
 * The answers here read nothing but the beacon, so they carry no data the Host check or a
 * token would guard.
 */
export const FRONT_DOOR_THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const net = require("node:net");
const { performance } = require("node:perf_hooks");
const data = workerData;
const slots = new BigInt64Array(data.beacon);
const SLOT = ${JSON.stringify(BEACON_SLOTS)};
const now = () => (Atomics.load(slots, SLOT.virtual) === 1n ? Number(Atomics.load(slots, SLOT.clock)) : Math.round(performance.timeOrigin + performance.now()));

/** What holds the daemon (the /readyz check it fails, and why), or undefined while its main thread turns. */
function held() {
  const at = now();
  const turnedAt = Number(Atomics.load(slots, SLOT.turnedAt));
  if (at - turnedAt <= data.frozenAfterMs) return undefined;
  const writeAt = Number(Atomics.load(slots, SLOT.writeStartedAt));
  const bound = "status.frozen_after is " + Math.round(data.frozenAfterMs / 100) / 10 + " s";
  if (writeAt !== 0) {
    return { check: "store", why: "a store write has held kaiawatch for " + Math.round((at - writeAt) / 1000) + " s (since " + new Date(writeAt).toISOString() + "; " + bound + "): the disk under the store may be frozen" };
  }
  return { check: "daemon", why: "kaiawatch's main thread has not turned for " + Math.round((at - turnedAt) / 1000) + " s (since " + new Date(turnedAt).toISOString() + "; " + bound + ")" };
}

// Made at the first held connection: node:http costs the thread's start time otherwise.
let heldServer;
const answerHeld = (req, res) => {
  const path = new URL(req.url || "/", "http://front.invalid").pathname;
  const { check, why } = held() || { check: "daemon", why: "kaiawatch was not answering when this connection opened; ask again on a new connection" };
  let type = "application/json; charset=utf-8";
  let body;
  if (path === "/healthz") {
    type = "text/plain; charset=utf-8";
    body = "not answering: " + why + "\\n";
  } else if (path === "/readyz") {
    body = JSON.stringify({ ready: false, reasons: [check + ": " + why], checks: { [check]: { ok: false, detail: why } } }, null, 2) + "\\n";
  } else {
    body = JSON.stringify({ error: "kaiawatch is not answering: " + why }, null, 2) + "\\n";
  }
  res.writeHead(503, Object.assign({ "content-type": type, "content-length": Buffer.byteLength(body), "cache-control": "no-store", connection: "close" }, data.headers));
  res.end(req.method === "HEAD" ? undefined : body);
};

const sockets = new Map();
let nextId = 1;
const post = (message, transfer) => parentPort.postMessage(message, transfer);

function relay(socket) {
  const id = nextId++;
  sockets.set(id, socket);
  post({ type: "open", id, remoteAddress: socket.remoteAddress, remotePort: socket.remotePort, remoteFamily: socket.remoteFamily, localAddress: socket.localAddress, localPort: socket.localPort });
  socket.on("data", (chunk) => {
    const copy = new Uint8Array(chunk);
    post({ type: "data", id, chunk: copy }, [copy.buffer]);
  });
  socket.on("end", () => post({ type: "end", id }));
  socket.on("timeout", () => post({ type: "timeout", id }));
  socket.on("error", () => undefined);
  socket.on("close", () => {
    sockets.delete(id);
    post({ type: "close", id });
  });
}

const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
  if (held() === undefined) return relay(socket);
  // Answered here: a client that does not send its request is cut (no main thread to do it).
  socket.setTimeout(data.requestTimeoutMs, () => socket.destroy());
  socket.on("error", () => undefined);
  heldServer ??= require("node:http").createServer(answerHeld);
  heldServer.emit("connection", socket);
});
server.maxConnections = data.maxConnections;
server.once("error", (error) => post({ type: "listen-error", code: error.code, message: error.message }));
server.listen(data.port, data.host, () => {
  server.on("error", () => undefined);
  post({ type: "listening", address: server.address() });
});

// The main thread ends this thread to close (Worker.terminate closes every socket).
parentPort.on("message", (message) => {
  const socket = sockets.get(message.id);
  if (socket === undefined) return;
  switch (message.type) {
    case "data": socket.write(message.chunk); break;
    case "end": socket.end(); break;
    case "destroy": socket.destroy(); break;
    case "pause": socket.pause(); break;
    case "resume": socket.resume(); break;
    case "timeout": socket.setTimeout(message.ms); break;
  }
});
`;
