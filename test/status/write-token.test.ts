import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { configFromText, memoryIO, quietCommon, tempDir } from "../helpers/harness.js";
import { freePort } from "../helpers/free-port.js";
import { busyTokenToOut } from "../helpers/simulator-config.js";

/**
 * Issue 29, item 7: any local user or process could move cursors, silence rules or queue a
 * forged alert, because a loopback peer needed no token. Now the write API needs a token by
 * default: `status.token`, or one the daemon makes at its first start in a file only its
 * user can read (0600), which the commands read. `status.trust_loopback: true` is the
 * explicit way back for a trusted machine. A real daemon, a real status server, the CLI.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SILENCE = { add: { id: "sil_0badf00d", rule: "token-logs", match: {}, reason: "treasury drained, ignore", created_at: "2026-01-01T00:00:00.000Z", expires_at: "2099-01-01T00:00:00.000Z" } };

async function world(statusKeys = ""): Promise<{ sim: Simulator; dir: string; path: string; yaml: string; start: () => Promise<string> }> {
  const sim = await createSimulator({ initialBlocks: 20 });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const port = await freePort();
  const yaml = `
explorer: { base_url: ${sim.url}, requests_per_second: 1000, max_retries: 0 }
chain: { rpc_url: ${sim.rpcUrl}, lag_blocks: 0 }
store: { path: ${join(dir.path, "store.json")} }
status: { listen: "127.0.0.1:${port}"${statusKeys} }
${busyTokenToOut(sim, `schedule: "0 0 0 1 1 *", start: latest`)}
sinks:
  out: { type: console }
`;
  const path = join(dir.path, "config.yaml");
  writeFileSync(path, yaml);
  return {
    sim,
    dir: dir.path,
    path,
    yaml,
    async start() {
      const daemon = await createDaemon(quietCommon(), { config: configFromText(yaml) });
      cleanups.push(() => daemon.stop());
      await daemon.start();
      return daemon.statusUrl() ?? "";
    },
  };
}

const post = (url: string, body: unknown, token?: string) =>
  fetch(`${url}/api/silences`, { method: "POST", headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });

describe("the write API needs a token by default", () => {
  it("a loopback peer without the token is refused; the token made at first start (0600) is accepted", async () => {
    const w = await world();
    const url = await w.start();
    const refused = await post(url, SILENCE);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toContain("status.write_token_file");

    const file = join(w.dir, "status-write-token");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, "utf8").trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect((await post(url, SILENCE, token)).status).toBe(200);
  });

  it("kaiawatch silence reads the token file and goes through the daemon", async () => {
    const w = await world();
    await w.start();
    const io = memoryIO();
    expect(await main(["silence", "add", "--config", w.path, "--rule", "token-logs", "--for", "1h", "--reason", "maintenance"], io)).toBe(0);
    expect(io.err()).not.toContain("401");
  });

  it("a restart keeps the token; a token file others may read is refused with KW_STATUS_TOKEN_FILE", async () => {
    const w = await world();
    await w.start();
    const file = join(w.dir, "status-write-token");
    const first = readFileSync(file, "utf8");
    for (const cleanup of cleanups.splice(2).reverse()) await cleanup();
    await w.start();
    expect(readFileSync(file, "utf8")).toBe(first);
    for (const cleanup of cleanups.splice(2).reverse()) await cleanup();

    chmodSync(file, 0o644);
    const daemon = await createDaemon(quietCommon(), { config: configFromText(w.yaml) });
    cleanups.push(() => daemon.stop());
    await expect(daemon.start()).rejects.toMatchObject({ code: "KW_STATUS_TOKEN_FILE", message: expect.stringContaining("chmod 600") });
  });

  it("status.trust_loopback: true lets this machine's processes write without a token, and makes no file", async () => {
    const w = await world(", trust_loopback: true");
    const url = await w.start();
    expect((await post(url, SILENCE)).status).toBe(200);
    expect(existsSync(join(w.dir, "status-write-token"))).toBe(false);
  });

  it("with status.token, that token is the write token and no file is made", async () => {
    const w = await world(', token: "status-token-0123456789"');
    const url = await w.start();
    expect((await post(url, SILENCE)).status).toBe(401);
    expect((await post(url, SILENCE, "status-token-0123456789")).status).toBe(200);
    expect(existsSync(join(w.dir, "status-write-token"))).toBe(false);
  });
});
