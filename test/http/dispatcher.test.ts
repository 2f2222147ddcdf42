import { Agent, type Dispatcher } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { createJsonRpc } from "../../src/chain/json-rpc.js";
import { createTestCommon } from "../../src/common/common.js";
import { createExplorerClient } from "../../src/explorer/client.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";

/**
 * One transport below both clients (issue 39, item 3): the explorer client and the JSON-RPC
 * client each send through a dispatcher handed in, here one undici Agent composed with an
 * interceptor that records what passes, and neither closes what it did not make.
 */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function simulator(): Promise<Simulator> {
  const sim = await createSimulator({ seed: 3, initialBlocks: 30 });
  cleanups.push(() => sim.close());
  return sim;
}

function recordingAgent(): { dispatcher: Dispatcher; seen: string[] } {
  const seen: string[] = [];
  const agent = new Agent();
  cleanups.push(() => agent.close());
  const record: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
    seen.push(`${options.method} ${String(options.origin)}${options.path.split("?")[0]}`);
    return dispatch(options, handler);
  };
  return { dispatcher: agent.compose(record), seen };
}

describe("a dispatcher handed in", () => {
  it("carries the explorer's and the node's requests alike, and stays open after both clients close", async () => {
    const sim = await simulator();
    const { dispatcher, seen } = recordingAgent();
    const common = createTestCommon();
    const explorer = createExplorerClient(common, { baseUrl: sim.url, requestsPerSecond: 0, dispatcher });
    const rpc = createJsonRpc(common, { rpcUrl: sim.rpcUrl, dispatcher });

    const head = await rpc.call("eth_blockNumber", []);
    expect(head).toBe(`0x${sim.head().toString(16)}`);
    const page = await explorer.accountEventLogs({ accountAddress: sim.addresses.busyToken, blockNumberStart: sim.head() - 29, blockNumberEnd: sim.head() });
    expect(page.results.length).toBeGreaterThan(0);

    const rpcPath = new URL(sim.rpcUrl);
    expect(seen).toEqual([`POST ${rpcPath.origin}${rpcPath.pathname}`, expect.stringMatching(new RegExp(`^GET ${new URL(sim.url).origin}/api/v1/accounts/`))]);

    await explorer.close();
    await rpc.close();
    // Neither client closed the dispatcher it was handed: a third request still goes through it.
    const again = createJsonRpc(common, { rpcUrl: sim.rpcUrl, dispatcher });
    expect(await again.call("eth_blockNumber", [])).toBe(head);
    expect(seen).toHaveLength(3);
  });
});
