import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createLogReader, type LogFilter } from "../../src/chain/get-logs.js";
import { createJsonRpc } from "../../src/chain/json-rpc.js";
import { createTestCommon } from "../../src/common/common.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";

const pad = (address: string) => `0x${"0".repeat(24)}${address.slice(2)}`;

/** Every log of the range as the explorer lists it (operation 11 of every contract), filtered here by the node's rules. */
function bruteForce(sim: Simulator, range: { from: number; to: number }, filters: readonly LogFilter[]): string[] {
  const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
  const all = contracts.flatMap((c) => sim.truth.accountEventLogs(c, range));
  const matches = (log: (typeof all)[number], f: LogFilter) =>
    (f.address === undefined || f.address.includes(log.contract_address)) && (f.topics ?? []).every((wanted, i) => wanted === null || (log.topics[i] !== undefined && wanted.includes(log.topics[i])));
  return all
    .filter((log) => filters.some((f) => (f.address === undefined || f.address.length > 0) && matches(log, f)))
    .sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index)
    .map((log) => `${log.block_number}:${log.log_index}:${log.transaction_hash}:${log.topics.join(",")}:${log.data}`);
}

describe("createLogReader's splits", () => {
  it("never lose or repeat a log: random chains, limits, ranges and filters give what the brute-force filter gives", async () => {
    let compared = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.integer({ min: 1, max: 1_000_000 }),
          blocks: fc.integer({ min: 1, max: 25 }),
          resultLimit: fc.integer({ min: 1, max: 60 }),
          rangeLimit: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
          timeoutBlocks: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
          // Room for one to six addresses beside the envelope (a query of single entries is sent whatever its size).
          maxRequestBytes: fc.option(fc.integer({ min: 250, max: 600 }), { nil: undefined }),
          span: fc.tuple(fc.nat(), fc.nat()),
          filterPicks: fc.array(fc.record({ addresses: fc.option(fc.array(fc.nat(), { maxLength: 12 }), { nil: undefined }), topic0: fc.option(fc.nat(), { nil: undefined }), toWallet: fc.option(fc.nat(), { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
        }),
        async (c) => {
          const sim = await createSimulator({ seed: c.seed, initialBlocks: c.blocks, logResultLimit: c.resultLimit, logBlockRangeLimit: c.rangeLimit, logTimeoutBlocks: c.timeoutBlocks });
          const rpc = createJsonRpc(createTestCommon(), { rpcUrl: sim.rpcUrl, maxRetries: 0 });
          try {
            const first = sim.head() - c.blocks + 1;
            const [a, b] = [first + (c.span[0] % c.blocks), first + (c.span[1] % c.blocks)];
            const range = { from: Math.min(a, b), to: Math.max(a, b) };
            const contracts = [...sim.addresses.tokens, ...sim.addresses.nftCollections, ...sim.addresses.contracts];
            const allLogs = contracts.flatMap((x) => sim.truth.accountEventLogs(x, { from: first, to: sim.head() }));
            const topic0s = [...new Set(allLogs.map((l) => l.topics[0] as string))];
            const filters: LogFilter[] = c.filterPicks.map((p) => {
              const filter: { address?: string[]; topics?: (string[] | null)[] } = {};
              if (p.addresses !== undefined) filter.address = [...new Set(p.addresses.map((i) => contracts[i % contracts.length] as string))];
              const topics: (string[] | null)[] = [];
              if (p.topic0 !== undefined && topic0s.length > 0) topics.push([topic0s[p.topic0 % topic0s.length] as string]);
              if (p.toWallet !== undefined) {
                while (topics.length < 2) topics.push(null);
                topics.push([pad(sim.addresses.wallets[p.toWallet % 4] as string)]);
              }
              if (topics.length > 0) filter.topics = topics;
              return filter;
            });
            // One block of one address can exceed a low result limit: then the reader says so, and nothing else may fail.
            const reader = createLogReader(createTestCommon(), { rpc, ...(c.maxRequestBytes === undefined ? {} : { maxRequestBytes: c.maxRequestBytes }) });
            const expected = bruteForce(sim, range, filters);
            let got: string[];
            try {
              got = (await reader.read(range, filters, new AbortController().signal)).map((l) => `${l.blockNumber}:${l.logIndex}:${l.transactionHash}:${l.topics.join(",")}:${l.data}`);
            } catch (error) {
              expect((error as { code?: string }).code).toBe("KW_RPC_LOG_LIMIT");
              // Only where one block of one address (or of an address-less filter) holds more than the limit.
              const crowded = filters.some((f) =>
                (f.address ?? [undefined]).some((address) => {
                  const perBlock = new Map<number, number>();
                  for (const key of bruteForce(sim, range, [address === undefined ? f : { ...f, address: [address] }])) {
                    const block = Number(key.split(":")[0]);
                    perBlock.set(block, (perBlock.get(block) ?? 0) + 1);
                  }
                  return [...perBlock.values()].some((n) => n > c.resultLimit);
                }),
              );
              expect(crowded).toBe(true);
              refused++;
              return;
            }
            expect(got).toEqual(expected);
            compared++;
          } finally {
            await rpc.close();
            await sim.close();
          }
        },
      ),
      { numRuns: 40 },
    );
    // Most runs compare whole answers; the rest are refusals shown to be the node's own limit.
    expect(compared).toBeGreaterThan(refused);
  });
});
