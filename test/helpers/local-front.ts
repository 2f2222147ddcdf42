import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the front received it (its body read whole). */
export interface FrontRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * A server on 127.0.0.1 in front of `target` (the simulator's explorer API or JSON-RPC node):
 * each request is forwarded as it came, unless `intercept` takes it first (answers it, or
 * holds it unanswered) and returns true. How a test makes a service wedge, go down or lie.
 */
export async function startLocalFront(target: string, intercept: (req: FrontRequest, res: ServerResponse) => boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      if (intercept(request, res)) return;
      const headers: Record<string, string> = {};
      if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
      if (req.headers["content-type"] !== undefined) headers["content-type"] = req.headers["content-type"];
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : request.body;
      fetch(`${target}${request.url}`, { method: request.method, headers, body }).then(
        async (answer) => {
          res.writeHead(answer.status, { "content-type": "application/json" });
          res.end(await answer.text());
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
