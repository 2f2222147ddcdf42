import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CommandIO } from "../../src/cli/command.js";
import { simulateCommand } from "../../src/cli/commands/simulate.js";
import { main } from "../../src/cli/main.js";
import { waitFor } from "../helpers/wait-for.js";
import { get, rpc } from "./http.js";
import { pathOf } from "./spec-schemas.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { configOfBanner } from "../helpers/simulator-banner.js";

function captureIO(signal: AbortSignal): { io: CommandIO; out: () => string; err: () => string; banner: () => Promise<string> } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  stderr.on("data", (c: Buffer) => (err += c.toString()));
  // Resolved by the output itself, once the banner's last line is written.
  const banner = () =>
    new Promise<string>((resolve) => {
      const check = () => {
        if (!out.includes("Stop with Ctrl-C.")) return;
        stdout.off("data", check);
        resolve(out);
      };
      stdout.on("data", check);
      check();
    });
  return { io: { stdout, stderr, env: {}, signal }, out: () => out, err: () => err, banner };
}

describe("kaiawatch simulate", () => {
  it("serves until the signal aborts, printing its URLs and addresses to watch", async () => {
    const controller = new AbortController();
    const { io, out } = captureIO(controller.signal);
    const running = simulateCommand.run(["--port", "0", "--seed", "7", "--block-time", "0", "--api-key", "cli-secret-key", "--lag", "2", "--initial-blocks", "30"], io);
    await waitFor(() => out().includes("Stop with Ctrl-C."), 20_000, "the banner");
    const url = /explorer API {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out())?.[1];
    const wallet = /busy wallet {6}(0x[0-9a-f]{40})/.exec(out())?.[1];
    expect(url).toBeDefined();
    expect(wallet).toBeDefined();
    expect(out()).not.toContain("cli-secret-key");
    const head = Number.parseInt(((await rpc(url!, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" })) as { result: string }).result, 16);
    expect(head).toBe(100_000_029);
    const path = pathOf("accountInternalTransactions", { accountAddress: wallet! });
    expect((await get(url!, path)).status).toBe(401);
    const answer = await get(url!, path, { size: 2000 }, { authorization: "Bearer cli-secret-key" });
    expect(answer.status).toBe(200);
    const blocks = (answer.json as { results: { block_id: number }[] }).results.map((r) => r.block_id);
    expect(Math.max(...blocks)).toBe(head - 2);
    controller.abort();
    expect(await running).toBe(0);
    expect(out()).toMatch(/stopped at block \d+ after 3 requests \(20 credits charged\)/);
    await expect(fetch(url!)).rejects.toThrow();
  });

  it("--density sets the records per block of each family", async () => {
    const controller = new AbortController();
    const { io, out } = captureIO(controller.signal);
    const running = simulateCommand.run(["--port", "0", "--block-time", "0", "--initial-blocks", "10", "--density", "eventLogs=0, nftTransfers=0,internalTransactions=40"], io);
    await waitFor(() => out().includes("Stop with Ctrl-C."), 20_000, "the banner");
    expect(out()).toContain("density       0 event logs, 0 NFT transfers, 40 internal transactions per block on average");
    const url = /explorer API {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out())![1]!;
    const token = /busy token {7}(0x[0-9a-f]{40})/.exec(out())![1]!;
    const collection = /busy collection {2}(0x[0-9a-f]{40})/.exec(out())![1]!;
    const total = async (path: string) => ((await get(url, path)).json as { paging: { total_count: number } }).paging.total_count;
    expect(await total(pathOf("accountEventLogs", { accountAddress: token }))).toBe(0);
    expect(await total(pathOf("nftTransfers", { tokenAddress: collection }))).toBe(0);
    // Each block holds 20 to 60 internal transactions; the default (12 on average) never passes 18.
    for (let block = 100_000_000; block < 100_000_010; block++) expect(await total(pathOf("blockInternalTransactions", { blockNumber: block }))).toBeGreaterThanOrEqual(20);
    controller.abort();
    expect(await running).toBe(0);

    for (const density of ["eventLogs", "events=1", "eventLogs=-1", "eventLogs=x", "eventLogs=20000", "eventLogs=1,,nftTransfers=2"]) {
      const bad = captureIO(new AbortController().signal);
      expect(await simulateCommand.run(["--density", density], bad.io), density).toBe(2);
      expect(bad.err()).toMatch(/^kaiawatch simulate: --density must be NAME=N pairs/);
    }
  });

  it("rejects bad flags with a message and exit code 2", async () => {
    for (const args of [["--port", "99999"], ["--error-rate", "1.5"], ["--block-time", "soon"], ["--seed", "x"], ["--nope"], ["--rps", "0"], ["stray"]]) {
      const { io, err } = captureIO(new AbortController().signal);
      expect(await simulateCommand.run(args, io), args.join(" ")).toBe(2);
      expect(err()).toMatch(/^kaiawatch simulate: .+\nRun `kaiawatch simulate --help`/);
      expect(err()).not.toMatch(/\n\s+at /);
    }
  });

  it.each([
    ["the default chain (Kairos)", ["--chain-id", "1001"], "chain 1001 is kairos"],
    ["--chain-id 8217 (mainnet), a key and an indexer 3 blocks behind", ["--chain-id", "8217", "--api-key", "banner-key", "--lag", "3"], "chain 8217 is mainnet"],
  ])("prints a config.yaml that kaiawatch doctor passes as it stands: %s", async (_name, flags, network) => {
    const controller = new AbortController();
    const sim = captureIO(controller.signal);
    const running = simulateCommand.run(["--port", "0", "--block-time", "0", "--initial-blocks", "20", ...flags], sim.io);
    const dir = tempDir("kaiawatch-simulate-banner-");
    try {
      const path = join(dir.path, "config.yaml");
      writeFileSync(path, configOfBanner(await sim.banner()));
      const io = memoryIO({ KAIASCAN_API_KEY: "banner-key" });
      const code = await main(["doctor", "--config", path], io);
      expect(io.out() + io.err(), "doctor's report").toContain(network);
      expect(io.out()).toContain("all is well");
      expect(code).toBe(0);
    } finally {
      controller.abort();
      dir.remove();
    }
    expect(await running).toBe(0);
  });

  it("reports a port in use as a runtime failure", async () => {
    const controller = new AbortController();
    const first = captureIO(controller.signal);
    const running = simulateCommand.run(["--port", "0", "--initial-blocks", "1"], first.io);
    await waitFor(() => first.out().includes("Stop with Ctrl-C."), 20_000, "the banner");
    const port = /127\.0\.0\.1:(\d+)/.exec(first.out())?.[1];
    const second = captureIO(new AbortController().signal);
    expect(await simulateCommand.run(["--port", port!, "--initial-blocks", "1"], second.io)).toBe(1);
    expect(second.err()).toContain("already in use");
    controller.abort();
    expect(await running).toBe(0);
  });

  it("documents every option in --help", async () => {
    const { io, out } = captureIO(new AbortController().signal);
    expect(await main(["simulate", "--help"], io)).toBe(0);
    for (const option of ["--port", "--host", "--seed", "--block-time", "--start-block", "--initial-blocks", "--density", "--api-key", "--rps", "--daily-quota", "--lag", "--error-rate", "--latency", "--truncate-rate", "--malformed-rate", "--reset-rate", "--short-page-rate", "--hostile"]) expect(out()).toContain(option);
  });
});
