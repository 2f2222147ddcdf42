import { afterEach, describe, expect, it } from "vitest";
import { createJsonRpc, type JsonRpc } from "../../src/chain/json-rpc.js";
import { MAX_SYMBOL_CHARS, NotATokenError, createTokenInfoCache, readTokenInfo } from "../../src/chain/token-info.js";
import { createTestCommon } from "../../src/common/common.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { HOSTILE_STRINGS } from "../../src/simulator/hostile.js";
import { startFixtureServer, type FixtureServer, type SeenRequest } from "../explorer/fixture-server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});
async function simulator(hostile = false): Promise<Simulator> {
  const s = await createSimulator({ seed: 12, initialBlocks: 3, hostile });
  cleanups.push(() => s.close());
  return s;
}
async function fixture(): Promise<FixtureServer> {
  const server = await startFixtureServer();
  cleanups.push(() => server.close());
  return server;
}
function client(rpcUrl: string): JsonRpc {
  const rpc = createJsonRpc(createTestCommon(), { rpcUrl, maxRetries: 0 });
  cleanups.push(() => rpc.close());
  return rpc;
}

const word = (n: bigint | number) => BigInt(n).toString(16).padStart(64, "0");
const abiString = (text: string) => {
  const hex = Buffer.from(text, "utf8").toString("hex");
  return `0x${word(32)}${word(hex.length / 2)}${hex.padEnd(Math.ceil(hex.length / 64) * 64, "0")}`;
};
/** Answers decimals() and symbol() of the fixture's one contract. */
function token(decimals: unknown, symbol: unknown) {
  return (request: SeenRequest) => {
    const { params } = JSON.parse(request.body) as { params: [{ data: string }] };
    const value = params[0].data === "0x313ce567" ? decimals : symbol;
    return { body: typeof value === "object" && value !== null ? { jsonrpc: "2.0", id: 1, ...value } : { jsonrpc: "2.0", id: 1, result: value } };
  };
}
const TOKEN = "0x00000000000000000000000000000000000000Aa";

describe("token info", () => {
  it("reads decimals and symbol of the simulator's tokens: 18, 6, a bytes32 symbol, and 0", async () => {
    const s = await simulator();
    const rpc = client(s.rpcUrl);
    const infos = await Promise.all(s.addresses.tokens.map((t) => readTokenInfo(rpc, t)));
    expect(infos.map((i) => [i.decimals, i.symbol])).toEqual([
      [18, "WKAIA"],
      [6, "USDT"],
      [18, "BORA"],
      [0, "STK"],
    ]);
    expect(infos[0]!.address).toBe(s.addresses.tokens[0]);
  });

  it("an NFT collection, a router and a wallet are not tokens, each with a message naming the address", async () => {
    const s = await simulator();
    const rpc = client(s.rpcUrl);
    for (const [address, why] of [
      [s.addresses.nftCollections[0]!, /decimals\(\) reverted/],
      [s.addresses.contracts[0]!, /decimals\(\) reverted/],
      [s.addresses.wallets[0]!, /returned no data/],
    ] as const) {
      const error = (await readTokenInfo(rpc, address).catch((e: unknown) => e)) as NotATokenError;
      expect(error).toBeInstanceOf(NotATokenError);
      expect(error.code).toBe("KW_TOKEN_NOT_A_TOKEN");
      expect(error.message).toContain(address);
      expect(error.message).toMatch(why);
    }
  });

  it("keeps a hostile symbol as data, exactly as the contract returns it", async () => {
    const s = await simulator(true);
    const info = await readTokenInfo(client(s.rpcUrl), s.addresses.tokens[3]!);
    expect(info.symbol).toBe(HOSTILE_STRINGS[4]);
  });

  it("refuses decimals above 77 and decimals that are not a uint8", async () => {
    const server = await fixture();
    const rpc = client(server.url);
    server.setDefault(token(`0x${word(78)}`, abiString("BIG")));
    await expect(readTokenInfo(rpc, TOKEN)).rejects.toThrow(/more than 77/);
    server.setDefault(token(`0x${word(2n ** 200n)}`, abiString("BIG")));
    await expect(readTokenInfo(rpc, TOKEN)).rejects.toMatchObject({ code: "KW_TOKEN_NOT_A_TOKEN" });
    server.setDefault(token("0x1234", abiString("BIG")));
    await expect(readTokenInfo(rpc, TOKEN)).rejects.toMatchObject({ code: "KW_TOKEN_NOT_A_TOKEN" });
  });

  it("caps a long symbol; a token without symbol() is still a token", async () => {
    const server = await fixture();
    const rpc = client(server.url);
    server.setDefault(token(`0x${word(6)}`, abiString("Visit https://claim.example to get your airdrop ".repeat(20))));
    const info = await readTokenInfo(rpc, TOKEN);
    expect(Array.from(info.symbol!)).toHaveLength(MAX_SYMBOL_CHARS);
    expect(info.symbol!.endsWith("…")).toBe(true);
    server.setDefault(token(`0x${word(6)}`, { error: { code: -32000, message: "execution reverted" } }));
    expect(await readTokenInfo(rpc, TOKEN)).toEqual({ address: TOKEN.toLowerCase(), decimals: 6, symbol: undefined });
  });

  it("a transport failure is not 'not a token'", async () => {
    const server = await fixture();
    server.setDefault({ status: 503, body: "down" });
    await expect(readTokenInfo(client(server.url), TOKEN)).rejects.toMatchObject({ code: "KW_RPC_HTTP" });
  });

  it("the cache reads a token once, shares a read in flight, and forgets a failure", async () => {
    const server = await fixture();
    const cache = createTokenInfoCache(client(server.url));
    server.setDefault({ status: 503, body: "down" });
    await expect(cache.get(TOKEN)).rejects.toMatchObject({ code: "KW_RPC_HTTP" });
    server.setDefault(token(`0x${word(6)}`, abiString("USDT")));
    const before = server.requests.length;
    const [a, b] = await Promise.all([cache.get(TOKEN), cache.get(TOKEN.toLowerCase())]);
    expect(a).toEqual({ address: TOKEN.toLowerCase(), decimals: 6, symbol: "USDT" });
    expect(b).toBe(a);
    expect(await cache.get(TOKEN)).toBe(a);
    expect(server.requests.length - before).toBe(2);
  });
});
