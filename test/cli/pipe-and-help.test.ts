import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CONFIG_OPTIONS_HELP } from "../../src/cli/bootstrap.js";
import { configFromText } from "../helpers/harness.js";
import { BIN } from "../helpers/child.js";

describe("the kaiawatch command line", () => {
  it("ends quietly with 0 when the reader of its output goes away (`kaiawatch outbox | head`)", { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [BIN, "outbox", "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    // The reader closes before the command writes: its first write fails with EPIPE.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("--log-format help names the default the config really has (json)", () => {
    const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:1" }
chain: { rpc_url: "http://127.0.0.1:1" }
store: { path: /tmp/never-opened.json }
watches:
  - { name: w, account: "0x0000000000000000000000000000000000000001", sources: [internal_transactions] }
rules:
  - { name: r, watch: w, notify: [out] }
sinks:
  out: { type: file, path: /tmp/never-written.jsonl }
`);
    expect(config.log.format).toBe("json");
    expect(CONFIG_OPTIONS_HELP).toMatch(/--log-format FORMAT .*default: log\.format, which is json/);
  });
});
