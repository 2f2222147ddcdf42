import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply = (res: ServerResponse, req: Received) => void;

/** A real HTTP server on 127.0.0.1 that records every request and answers with `reply`. */
export interface Receiver {
  url: string;
  requests: Received[];
  reply: Reply;
  close(): Promise<void>;
}

export async function startReceiver(reply: Reply = (res) => res.end("ok")): Promise<Receiver> {
  const requests: Received[] = [];
  const receiver: Receiver = { url: "", requests, reply, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      requests.push(received);
      receiver.reply(res, received);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
