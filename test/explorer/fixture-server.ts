import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What the fixture server saw of one request. */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** How to answer one request. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Destroy the connection instead of answering (a reset). */
  destroy?: boolean;
  /** Send the headers and this many bytes of the body, then destroy the connection. */
  cutAfterBytes?: number;
  /** Send the body in chunks of this size without a Content-Length. */
  chunkBytes?: number;
}

export type Responder = Reply | ((request: SeenRequest) => Reply);

/**
 * A programmable HTTP server on 127.0.0.1: answers from a queue, then from a default.
 * Tests read `requests` to see what reached the network.
 */
export interface FixtureServer {
  url: string;
  requests: SeenRequest[];
  /** Answers for the next requests, in order. */
  enqueue(...replies: Responder[]): void;
  /** The answer once the queue is empty (404 by default). */
  setDefault(reply: Responder): void;
  /** Resolves once `count` requests have arrived (at once if they have): an event, not a poll. */
  requestsArrived(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const requests: SeenRequest[] = [];
  const queue: Responder[] = [];
  let fallback: Responder = { status: 404, body: { code: "NOT_FOUND_URL", title: "Not Found", message: "no reply programmed" } };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const arrivals: { count: number; resolve: () => void }[] = [];

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fixture");
      const seen: SeenRequest = { method: req.method ?? "", path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: performance.now() };
      requests.push(seen);
      for (const arrival of arrivals.filter((a) => requests.length >= a.count)) {
        arrivals.splice(arrivals.indexOf(arrival), 1);
        arrival.resolve();
      }
      const responder = queue.shift() ?? fallback;
      const reply = typeof responder === "function" ? responder(seen) : responder;
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(res, reply);
        }, reply.delayMs);
        timers.add(timer);
      } else answer(res, reply);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    requestsArrived: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => arrivals.push({ count, resolve })),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  if (reply.destroy) {
    res.socket?.destroy();
    return;
  }
  const text = typeof reply.body === "string" ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body);
  const bytes = Buffer.from(text, "utf8");
  const headers = { "content-type": "application/json", ...reply.headers };
  if (reply.cutAfterBytes !== undefined) {
    res.writeHead(reply.status ?? 200, { ...headers, "content-length": String(bytes.length) });
    res.write(bytes.subarray(0, reply.cutAfterBytes), () => res.socket?.destroy());
    return;
  }
  if (reply.chunkBytes !== undefined) {
    res.writeHead(reply.status ?? 200, headers);
    for (let i = 0; i < bytes.length; i += reply.chunkBytes) res.write(bytes.subarray(i, i + reply.chunkBytes));
    res.end();
    return;
  }
  res.writeHead(reply.status ?? 200, { ...headers, "content-length": String(bytes.length) });
  res.end(bytes);
}
