import { EventEmitter } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { parseConfigText } from "../../src/config/index.js";
import { createDaemon } from "../../src/daemon/create-daemon.js";
import { createSimulator } from "../../src/simulator/index.js";
import { createReadiness } from "../../src/status/readiness.js";
import { tempDir } from "../helpers/harness.js";

/**
 * Issue 41: a sink removed by a reload while alerts wait for it is announced by one warn
 * line, and said in /readyz's detail and /status's conditions with the count and what to do. docs/configuration.md promises that secret-bearing values never appear in an
 * error or a log line: the line names the sink, and no part of its URL (host, port, path).
 * The reload is run as `kaiawatch run` runs it (run.ts): the old daemon stops, one of the new
 * config starts on the same store, one scrubber for both.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** JSON log lines, and an event for each. */
function lines(): { destination: Writable; all: string[]; events: EventEmitter } {
  const all: string[] = [];
  const events = new EventEmitter();
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n")) {
        if (line.trim() === "") continue;
        all.push(line);
        events.emit("line", line);
      }
      callback();
    },
  });
  return { destination, all, events };
}

describe("a sink removed by a reload with alerts pending", () => {
  it("is announced by one warn line that names it and quotes no part of its URL", async () => {
    const sim = await createSimulator({ initialBlocks: 20 });
    cleanups.push(() => sim.close());
    // The receiver refuses, so the alerts stay pending.
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const head = `explorer: { base_url: "${sim.url}", requests_per_second: 1000 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { schedule: "0 0 0 1 1 *", start: ${sim.head() - 5}, jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
`;
    const before = parseConfigText(`${head}rules:\n  - { name: r, watch: token, notify: [hook] }\nsinks:\n  hook: { type: webhook, url: "http://${host}/hooks/T0123/B0456-xyz", allow_http: true }\n`, { fileName: "config.yaml", env: {} });
    const after = parseConfigText(`${head}rules:\n  - { name: r, watch: token, notify: [out] }\nsinks:\n  out: { type: file, path: "${join(dir.path, "alerts.jsonl")}" }\n`, { fileName: "config.yaml", env: {} });
    const redactor = createSecretRedactor();
    const log = lines();
    const common = createTestCommon({ logger: createLogger({ level: "debug", redactor, destination: log.destination }), secrets: redactor });
    for (const secret of before.secrets) redactor.add(secret);
    const first = await createDaemon(common, { config: before.config });
    await first.start();
    await first.engine.runOnce();
    const pending = (await first.store.listOutbox({ sink: "hook", state: "pending" })).length;
    expect(pending).toBeGreaterThan(0);
    await first.stop();

    for (const secret of after.secrets) redactor.add(secret);
    const announced = new Promise<string>((resolve) => log.events.on("line", (line: string) => line.includes("not configured") && resolve(line)));
    const second = await createDaemon(common, { config: after.config });
    cleanups.push(() => second.stop());
    await second.start();
    const line = await announced;
    expect(log.all.filter((l) => l.includes("not configured"))).toEqual([line]);
    expect(JSON.parse(line)).toMatchObject({ level: 40, sink: "hook" });
    for (const part of [host, "/hooks/", "T0123", "B0456-xyz"]) expect(line).not.toContain(part);

    // Said in /readyz's sinks check (ready all the same: the alerts are kept, as they should
    // be) and, as a condition, in /status (kaiawatch status prints it) and to operational sinks.
    const said = `${pending} alert${pending === 1 ? "" : "s"} pending for sink hook, which the config no longer has: kept in the outbox, and sent once a sink named hook is configured again (kaiawatch outbox --sink hook lists them)`;
    const readiness = await createReadiness({ store: second.store, health: second.health })();
    expect(readiness.checks.sinks).toEqual({ ok: true, detail: said });
    const snapshot = await second.health.check();
    expect(snapshot.conditions.filter((condition) => condition.kind === "sink_removed_pending").map((condition) => condition.summary)).toEqual([said]);
    for (const part of [host, "/hooks/", "T0123", "B0456-xyz"]) expect(JSON.stringify([readiness, snapshot])).not.toContain(part);
  });
});
