import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { positionIn } from "./helpers.js";

function capture() {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return { stream, text: () => text };
}

async function runCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = capture();
  const stderr = capture();
  const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, env, signal: new AbortController().signal });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const GOOD = `
watches:
  - name: hot-wallet
    account: "0x1111111111111111111111111111111111111111"
    sources: [nft_transfers, internal_transactions]
  - name: token
    contract: "0x3333333333333333333333333333333333333333"
    events: ["Transfer(address,address,uint256)"]
rules:
  - name: big-outflow
    watch: hot-wallet
    source: internal_transactions
    notify: [ops-slack]
    cooldown: 5m
sinks:
  ops-slack: { type: slack, url: "\${SLACK_WEBHOOK_URL}" }
  spare: { type: console }
`;

describe("kaiawatch validate", () => {
  const dir = mkdtempSync(join(tmpdir(), "kaiawatch-validate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("says a watch read through a shared source is read, as plan does, not 'not polled'", async () => {
    const path = write("shared.yaml", `
watches:
  - { name: token, contract: "0x3333333333333333333333333333333333333333" }
  - { name: transfers, contract: "0x3333333333333333333333333333333333333333", events: ["Transfer(address,address,uint256)"] }
rules:
  - { name: token-logs, watch: token, notify: [out] }
  - { name: transfer-logs, watch: transfers, notify: [out] }
sinks: { out: { type: console } }
`);
    const { code, stdout } = await runCli(["validate", "--config", path]);
    expect(code).toBe(0);
    expect(stdout).toContain("watches (2, polling 1 source)");
    expect(stdout).not.toContain("not polled");
    expect(stdout).toMatch(/source event_logs Transfer\(address,address,uint256\) {2}\(read through src_[0-9a-f]{16}: event logs of 0x3333333333333333333333333333333333333333, shared\)/);
  });

  it("says where internal transactions are read with chain.traces: a node-read watch's share of the traces, not the explorer source another watch polls", async () => {
    const path = write("traces.yaml", `
chain: { traces: true }
watches:
  - { name: blocks, every_block: true, source: node }
  - { name: calls, account: "0x1111111111111111111111111111111111111111", sources: [internal_transactions], source: both }
rules:
  - { name: failed, watch: blocks, when: { failed: true }, notify: [out] }
  - { name: payouts, watch: calls, source: internal_transactions, notify: [out] }
sinks: { out: { type: console } }
`);
    const { code, stdout } = await runCli(["validate", "--config", path]);
    expect(code).toBe(0);
    const lines = stdout.split("\n");
    const block = (watch: string) => lines.slice(lines.findIndex((l) => l.startsWith(`  ${watch} `)) + 2, lines.findIndex((l) => l.startsWith(`  ${watch} `)) + 4);
    // blocks reads from the node only, though operation 8 is polled (for calls, under both).
    expect(block("blocks")).toEqual([
      "      source internal_transactions  (from the node instead, below)",
      expect.stringMatching(/^ {6}source node: internal_transactions from the node \(src_[0-9a-f]{16}: internal transactions of every block \(node traces\), one debug_traceBlockByNumber a block\)$/),
    ]);
    expect(block("calls")).toEqual([
      expect.stringMatching(/^ {6}source internal_transactions {2}\(read through src_[0-9a-f]{16}: internal transactions of every block, shared\)$/),
      expect.stringMatching(/^ {6}source both: internal_transactions from the node \(src_[0-9a-f]{16}: .*\), and from the explorer as above$/),
    ]);
  });

  it("summarises what will run and exits 0, without printing secrets", async () => {
    const path = write("good.yaml", GOOD);
    const url = "https://hooks.slack.com/services/T0/B0/very-secret";
    const { code, stdout, stderr } = await runCli(["validate", "--config", path], { SLACK_WEBHOOK_URL: url });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(`${path} is valid: network mainnet`);
    // Only big-outflow reads a source (hot-wallet's internal transactions): one source is polled.
    expect(stdout).toContain("watches (2, polling 1 source)");
    expect(stdout).toContain("source nft_transfers  (not polled: no rule reads it)");
    expect(stdout).toContain("source event_logs Transfer(address,address,uint256)  (not polled: no rule reads it)");
    expect(stdout).toMatch(/hot-wallet\s+account 0x1111111111111111111111111111111111111111/);
    expect(stdout).toContain("source internal_transactions");
    expect(stdout).toContain("source event_logs Transfer(address,address,uint256)");
    expect(stdout).toMatch(/big-outflow\s+hot-wallet\/internal_transactions\s+→ ops-slack {2}\(cooldown 5m\)/);
    expect(stdout).toMatch(/spare\s+console\s+not used by any rule/);
    expect(stdout).not.toContain("very-secret");
  });

  it("prints every problem with file, line and column and exits 2", async () => {
    const text = GOOD.replace("watch: hot-wallet", "watch: hot-walet").replace("cooldown: 5m", "cooldown: 5");
    const path = write("bad.yaml", text);
    const { code, stdout, stderr } = await runCli(["validate", `--config=${path}`], {});
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const at = (needle: string) => `${positionIn(text, needle).line}:${positionIn(text, needle).column}`;
    expect(stderr.split("\n")).toEqual([
      `${path}: 3 errors in the configuration:`,
      `${path}:${at("hot-walet")} rules[0].watch: no watch named "hot-walet" (did you mean "hot-wallet"?)`,
      `${path}:${at("5\nsinks:")} rules[0].cooldown: a duration needs a unit, e.g. "5ms" or "5s"`,
      `${path}:${at("${SLACK_WEBHOOK_URL}")} sinks.ops-slack.url: environment variable SLACK_WEBHOOK_URL is not set (set it, or write \${SLACK_WEBHOOK_URL:-default})`,
      "",
    ]);
  });

  it("runs the other subsystems' checks too, reporting them with the loader's own", async () => {
    const text = GOOD.replace("cooldown: 5m", "cooldown: 5m\n    when: { colour: red }").replace("url: \"${SLACK_WEBHOOK_URL}\"", "url: \"${SLACK_WEBHOOK_URL}\", rate_per_secnd: 1");
    const path = write("checks.yaml", text);
    const { code, stderr } = await runCli(["validate", "--config", path], { SLACK_WEBHOOK_URL: "https://hooks.example/s" });
    expect(code).toBe(2);
    const lines = stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(`${path}: 2 errors in the configuration:`);
    expect(lines[1]).toMatch(new RegExp(`^${path}:${positionIn(text, "red").line}:${positionIn(text, "red").column} rules\\[0\\]\\.when\\.colour: .*colour`));
    expect(lines[2]).toBe(`${path}:${positionIn(text, "rate_per_secnd").line}:${positionIn(text, "rate_per_secnd").column} sinks.ops-slack.rate_per_secnd: unknown key (did you mean "rate_per_second"?)`);
  });

  it("reads ./config.yaml by default and says clearly when it is missing", async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const { code, stderr } = await runCli(["validate"]);
      expect(code).toBe(2);
      expect(stderr).toBe("config file not found: ./config.yaml (start from config.example.yaml, or pass --config PATH)\n");
    } finally {
      process.chdir(cwd);
    }
  });

  it("refuses unknown arguments as every command does", async () => {
    const { code, stderr } = await runCli(["validate", "--confg", "x.yaml"]);
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--confg'");
    expect(stderr).toContain("Run `kaiawatch validate --help` for the options.");
    const help = await runCli(["validate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("-c, --config PATH");
  });

  it("takes -c PATH, as the other commands' help lists it", async () => {
    const path = join(dir, "short-flag.yaml");
    writeFileSync(path, "watches:\n  - { name: w, contract: \"0x0000000000000000000000000000000000000001\" }\n");
    for (const args of [["-c", path], [`-c${path}`], ["--config", path], [`--config=${path}`]]) {
      const { code, stdout, stderr } = await runCli(["validate", ...args]);
      expect(stderr, args.join(" ")).toBe("");
      expect(code).toBe(0);
      expect(stdout).toContain(`${path} is valid`);
    }
  });
});
