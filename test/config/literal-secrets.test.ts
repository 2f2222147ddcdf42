import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { parseConfigText } from "../../src/config/index.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { waitFor } from "../helpers/child.js";
import { configErrorOf } from "./helpers.js";

/**
 * Guarantee 6 for a config that does not parse: a secret written literally in the YAML and
 * followed by a mis-indented line used to become part of a key path in the error
 * (`explorer.api_key["SECRET… max_retries"]`). Every secret here carries "SECRET", so a
 * secret cut in part is caught as well as the whole value.
 */
const SECRET = "kaiascanSECRETq9w8e7r6";
const NEW_SECRET = "rotatedSECRETz1x2c3v4";

/** Each file writes SECRET under a secret-bearing key, then breaks the next line. */
const BROKEN: Record<string, string> = {
  "api_key, next line indented too far": `explorer:\n  api_key: ${SECRET}\n   max_retries: 3\nwatches:\n  - { name: w, every_block: true }\n`,
  "api_key, next line indented by four": `explorer:\n  api_key: ${SECRET}\n    max_retries: 3\nwatches:\n  - { name: w, every_block: true }\n`,
  "api_key without a space after the colon": `explorer:\n  api_key:${SECRET}\n    max_retries: 3\nwatches:\n  - { name: w, every_block: true }\n`,
  "status token, next line indented": `status:\n  token: ${SECRET}\n      listen: false\nwatches:\n  - { name: w, every_block: true }\n`,
  "smtp pass, quoted, next key glued": `watches:\n  - { name: w, every_block: true }\nsinks:\n  mail:\n    type: email\n    smtp: { host: smtp.example.com, pass: "${SECRET}" user: x }\n    from: a@example.com\n    to: [b@example.com]\n`,
  "webhook secret inside a broken flow map": `watches:\n  - { name: w, every_block: true }\nsinks:\n  hook: { type: webhook, url: "https://example.com/h", secret: ${SECRET}\n  other: { type: console }\n`,
  "slack url followed by a tab-indented line": `watches:\n  - { name: w, every_block: true }\nsinks:\n  chat:\n    type: slack\n    url: https://hooks.slack.com/services/T0/B0/${SECRET}\n\t  extra: 1\n`,
  "webhook header value, next line indented": `watches:\n  - { name: w, every_block: true }\nsinks:\n  hook:\n    type: webhook\n    url: https://example.com/h\n    headers:\n      Authorization: Bearer ${SECRET}\n        X-Other: 1\n`,
  "telegram token as a key of a nested map": `watches:\n  - { name: w, every_block: true }\nsinks:\n  tg:\n    type: telegram\n    bot_token: 123:${SECRET}\n      chat_id: 1\n`,
};

describe("a literal secret in a config that does not parse", () => {
  it.each(Object.entries(BROKEN))("%s: the error names the place, never the secret", (_name, text) => {
    const error = configErrorOf(() => parseConfigText(text, { fileName: "config.yaml", env: {} }));
    expect(error.issues.length).toBeGreaterThan(0);
    const everything = [error.message, error.details ?? "", error.format(), JSON.stringify(error), JSON.stringify(error.issues)].join("\n");
    expect(everything).not.toContain("SECRET");
  });

  it("a valid value under a secret key with an error elsewhere is hidden too (it came from ${VAR})", () => {
    const text = `explorer:\n  api_key: \${KEY}\n  bogus_${"x"}: 1\nwatches:\n  - { name: w, every_block: true }\n`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "config.yaml", env: { KEY: SECRET } }));
    expect(error.format()).toContain("explorer.bogus_x: unknown key");
    expect(error.secrets).toContain(SECRET);
    // Not enumerable: a logger serializing the error does not print the list.
    expect(JSON.stringify(error)).not.toContain("SECRET");
  });
});

describe("through the CLI", () => {
  const dir = tempDir("kaiawatch-literal-secrets-");
  afterAll(() => dir.remove());
  const broken = BROKEN["api_key, next line indented too far"] ?? "";

  it("kaiawatch validate: exit 2, the place of the error, no secret", async () => {
    const path = join(dir.path, "validate.yaml");
    writeFileSync(path, broken);
    const io = memoryIO();
    expect(await main(["validate", "--config", path], io)).toBe(2);
    // A syntax error has no key path (the tree after it is a guess): the lines show the place.
    expect(io.err()).toContain(`${path}:3:4 YAML syntax error`);
    expect(io.err()).toContain("api_key: [redacted]");
    expect(io.out() + io.err()).not.toContain("SECRET");
  });

  it("kaiawatch run: refuses to start with exit 2, no secret", async () => {
    const path = join(dir.path, "run.yaml");
    writeFileSync(path, broken);
    const io = memoryIO();
    expect(await main(["run", "--config", path, "--log-format", "json"], io)).toBe(2);
    expect(io.err()).toContain("YAML syntax error");
    expect(io.out() + io.err()).not.toContain("SECRET");
  });
});

describe("SIGHUP with a refused config holding a new secret", () => {
  let sim: Simulator;
  const dir = tempDir("kaiawatch-reload-secret-");
  beforeAll(async () => {
    sim = await createSimulator({ seed: 5, initialBlocks: 10, blockTime: 1000, apiKey: SECRET });
  });
  afterAll(async () => {
    await sim.close();
    dir.remove();
  });

  it("logs the refusal without the new secret, and keeps running", async () => {
    const configPath = join(dir.path, "config.yaml");
    const base = (apiKey: string, brokenLine: string) => `
explorer:
  base_url: "${sim.url}"
  api_key: ${apiKey}
${brokenLine}chain: { rpc_url: "${sim.rpcUrl}", lag_blocks: 0 }
store: { path: "${join(dir.path, "store.json")}" }
status: { listen: false }
defaults: { schedule: "* * * * * *", start: latest, jitter: 0s }
watches: [ { name: token, contract: "${sim.addresses.busyToken}" } ]
`;
    writeFileSync(configPath, base(SECRET, ""));
    const controller = new AbortController();
    let reload: (() => void) | undefined;
    const io = { ...memoryIO({}, controller.signal), onReload: (listener: () => void) => ((reload = listener), () => (reload = undefined)) };
    const exited = main(["run", "--config", configPath, "--log-format", "json", "--log-level", "debug"], io);
    try {
      await waitFor(() => io.err().includes("kaiawatch running") && reload !== undefined, 20_000, "the daemon to start");
      writeFileSync(configPath, base(NEW_SECRET, "     requests_per_second: 5\n"));
      reload?.();
      await waitFor(() => io.err().includes("reload refused"), 20_000, "the refusal");
      // The refused file's secret is scrubbed from anything logged after, too.
      await waitFor(() => reload !== undefined, 20_000, "the daemon to listen again");
    } finally {
      controller.abort();
    }
    expect(await exited).toBe(0);
    const lines = io.err().split("\n").filter((line) => line.trim() !== "");
    const refusal = lines.find((line) => line.includes("reload refused")) ?? "";
    expect(refusal).toContain("api_key: [redacted]");
    expect(io.out() + io.err()).not.toContain("SECRET");
  }, 60_000);
});
