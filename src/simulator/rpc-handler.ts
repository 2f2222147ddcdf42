import type { IncomingMessage, ServerResponse } from "node:http";
import type { Balances } from "./balances.js";
import type { Chain } from "./chain.js";
import type { Meter } from "./meter.js";
import { answerBlockRpc } from "./block-rpc.js";
import { answerBlockTraceRpc } from "./block-trace-rpc.js";
import { answerLogsRpc } from "./logs-rpc.js";
import { answerReceiptsRpc } from "./receipts-rpc.js";
import type { Responder } from "./respond.js";
import type { LiveSettings, SimulatorLimits } from "./simulator.js";
import { answerStateRpc } from "./state-rpc.js";
import type { World } from "./world.js";

/** A Kaia node's default --maxRequestContentLength (common/variables.go). */
const KAIA_MAX_REQUEST_BYTES = 512 * 1024;

export interface RpcHandlerDeps {
  world: World;
  chain: Chain;
  balances: Balances;
  chainId: number;
  limits: SimulatorLimits;
  live: LiveSettings;
  meter: Meter;
  respond: Responder;
}

/** The JSON-RPC side of the simulator: single and batch requests, the head, the chain id, state, blocks, logs, receipts and traces. */
export function createRpcHandler({ world, chain, balances, chainId, limits, live, meter, respond }: RpcHandlerDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { send } = respond;
  function rpcResult(request: unknown): unknown {
    const r = request as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const id = r && typeof r === "object" && "id" in r ? r.id : null;
    if (!r || typeof r !== "object" || typeof r.method !== "string") return { jsonrpc: "2.0", id, error: { code: -32600, message: "invalid request" } };
    meter.rpcCall(r.method);
    switch (r.method) {
      case "eth_blockNumber":
      case "kaia_blockNumber":
      case "klay_blockNumber":
        return { jsonrpc: "2.0", id, result: `0x${chain.head.toString(16)}` };
      case "eth_chainId":
      case "kaia_chainId":
        return { jsonrpc: "2.0", id, result: `0x${chainId.toString(16)}` };
      default: {
        const state = answerStateRpc(world, chain, balances, r.method, r.params) ?? answerBlockRpc(chain, r.method, r.params) ?? answerLogsRpc(chain, r.method, r.params, limits) ?? answerReceiptsRpc(chain, r.method, r.params, { debugUnavailable: live.faults.debugUnavailable }) ?? answerBlockTraceRpc(chain, r.method, r.params, { debugUnavailable: live.faults.debugUnavailable });
        if (state) return { jsonrpc: "2.0", id, ...state };
        return { jsonrpc: "2.0", id, error: { code: -32601, message: `the method ${r.method} does not exist/is not available` } };
      }
    }
  }

  return async function handleRpc(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    const maxBytes = limits.rpcMaxRequestBytes ?? KAIA_MAX_REQUEST_BYTES;
    // As networks/rpc/http.go: the body's length is checked before the call is read, and the refusal is plain text.
    const refuse = (length: number) => {
      // The rest of the body is read and dropped, so the client gets the answer, not a broken pipe.
      req.resume();
      meter.request("rpc", "413");
      res.writeHead(413, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
      res.end(`content length too large (${length}>${maxBytes})\n`);
    };
    const declared = Number(req.headers["content-length"]);
    if (declared > maxBytes) return refuse(declared);
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) return refuse(size);
      chunks.push(chunk);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return send(res, "rpc", 200, JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } }));
    }
    const out = Array.isArray(parsed) ? parsed.map(rpcResult) : rpcResult(parsed);
    send(res, "rpc", 200, JSON.stringify(out));
  };
}
