import { execFile } from "node:child_process";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createTestCommon } from "../../src/common/common.js";
import { createLogger } from "../../src/common/logger.js";
import { createSecretRedactor } from "../../src/common/secrets.js";
import { parseConfigText } from "../../src/config/index.js";
import { createHostCheck, isLoopbackHost } from "../../src/status/allowed-hosts.js";
import { createStatusServer, type StatusProvider, type StatusServer } from "../../src/status/status-server.js";
import { configErrorOf } from "../config/helpers.js";
import { logCapture } from "../helpers/harness.js";

/*
 * Issue 20, item 6: a weak status.token was accepted, a status server open to the network
 * without a token said nothing, and the Host header was not checked, so a page on a name
 * rebound to 127.0.0.1 could read /status from the operator's browser.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WATCH = "watches: [ { name: w, every_block: true } ]\n";

describe("status.token", () => {
  it.each([
    ["with a space", "abcdefgh ijklmnopq", "a token cannot contain spaces or other whitespace"],
    ["with a tab", "abcdefgh\\tijklmnopq", "a token cannot contain spaces or other whitespace"],
    ["of 15 characters", "abcdefghijklmno", "too short: at least 16 characters"],
  ])("%s is refused as a config error that does not show it", (_what, token, message) => {
    const error = configErrorOf(() => parseConfigText(`status: { token: "${token}" }\n${WATCH}`, { fileName: "config.yaml" }));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ path: "status.token", line: 1 });
    expect(error.issues[0]?.message).toContain(message);
    expect(error.format()).not.toContain(token.slice(0, 8));
  });

  it("of 16 characters or more is accepted; empty (an unset ${VAR:-}) means none", () => {
    expect(parseConfigText(`status: { token: "abcdefghijklmnop" }\n${WATCH}`).config.status.token).toBe("abcdefghijklmnop");
    expect(parseConfigText(`status: { token: "\${T:-}" }\n${WATCH}`, { env: {} }).config.status.token).toBeUndefined();
  });

  it("status.allowed_hosts takes host names only", () => {
    expect(parseConfigText(`status: { allowed_hosts: [kaiawatch, status.example.com] }\n${WATCH}`).config.status.allowed_hosts).toEqual(["kaiawatch", "status.example.com"]);
    const error = configErrorOf(() => parseConfigText(`status: { allowed_hosts: ["http://x:1"] }\n${WATCH}`));
    expect(error.format()).toContain("status.allowed_hosts[0]: expected a host name (no port, no scheme)");
  });
});

describe("which Host a request may carry", () => {
  it("loopback names, any IP address, the listen host and the configured names", () => {
    const check = createHostCheck("status.internal", ["prometheus-target"]);
    for (const host of ["localhost:9464", "LOCALHOST", "app.localhost:1", "127.0.0.1:9464", "10.1.2.3:9464", "[::1]:9464", "[fe80::1]", "status.internal:9464", "prometheus-target", "localhost.", undefined]) {
      expect(check(host), String(host)).toBe(true);
    }
    for (const host of ["evil.example", "evil.example:9464", "localhost.evil.example", "status.internal.evil", "127.0.0.1.nip.io", "a b", "[::1", "x:99999999"]) {
      expect(check(host), host).toBe(false);
    }
  });

  it("a wildcard listen address adds no name", () => {
    expect(createHostCheck("0.0.0.0")("0.0.0.0:9464")).toBe(true);
    expect(createHostCheck("0.0.0.0")("myhost:9464")).toBe(false);
    expect(createHostCheck("::")("myhost")).toBe(false);
  });

  it("loopback listen addresses", () => {
    expect(["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "::", "10.0.0.1", "example.com"].some(isLoopbackHost)).toBe(false);
  });
});

const provider: StatusProvider = {
  readiness: () => Promise.resolve({ ready: true, reasons: [], checks: {} }),
  status: () => Promise.resolve({ sources: [] }),
};


async function serve(options: { host?: string; token?: string; allowedHosts?: string[] } = {}) {
  const { destination, lines } = logCapture();
  const common = createTestCommon({ logger: createLogger({ level: "info", redactor: createSecretRedactor(), destination }) });
  const server: StatusServer = await createStatusServer(common, { listen: { host: options.host ?? "127.0.0.1", port: 0 }, token: options.token, allowedHosts: options.allowedHosts, provider });
  cleanups.push(() => server.close());
  return { server, lines, port: Number(new URL(server.url).port) };
}

/** A GET with a chosen Host header (fetch does not let one set it). */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the status server", () => {
  it("answers 421 with a short body to a Host it does not serve (DNS rebinding), on every path", async () => {
    const { port } = await serve({ allowedHosts: ["kaiawatch"] });
    for (const path of ["/", "/status", "/metrics", "/readyz", "/healthz", "/nope"]) {
      const refused = await get(port, path, `rebind.evil.example:${port}`);
      expect(refused.status, path).toBe(421);
      expect(refused.body.length).toBeLessThan(200);
      expect(JSON.parse(refused.body)).toEqual({ error: "this server does not answer to that host name; add it to status.allowed_hosts" });
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `kaiawatch:${port}`]) {
      expect((await get(port, "/status", host)).status, host).toBe(200);
    }
  });

  it("the status page and the Docker healthcheck still work over 127.0.0.1 and localhost", async () => {
    const { server } = await serve();
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect((await fetch(server.url.replace("127.0.0.1", "localhost") + "/status")).status).toBe(200);
    const script = fileURLToPath(new URL("../../scripts/healthcheck.mjs", import.meta.url));
    const run = await promisify(execFile)(process.execPath, [script], { env: { ...process.env, KAIAWATCH_HEALTHCHECK_URL: `${server.url}/healthz` } });
    expect(run.stderr).toBe("");
  });

  it("warns at start-up when it listens beyond loopback without a token", async () => {
    const open = await serve({ host: "0.0.0.0" });
    const warning = open.lines.find((line) => line.level === 40);
    expect(warning?.msg).toBe("the status server listens beyond this machine without status.token: anyone who reaches it can read /status and /metrics (the sources, rules, sinks and recent alerts); set status.token");
    const guarded = await serve({ host: "0.0.0.0", token: "a-long-enough-token-42" });
    expect(guarded.lines.filter((line) => line.level === 40)).toEqual([]);
    const local = await serve({ host: "127.0.0.1" });
    expect(local.lines.filter((line) => line.level === 40)).toEqual([]);
  });
});
