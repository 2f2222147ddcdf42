import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { parseConfigText } from "../../src/config/index.js";
import { SINK_DEFINITIONS } from "../../src/notify/sinks/index.js";
import { memoryIO, tempDir } from "../helpers/harness.js";
import { configErrorOf } from "./helpers.js";

/**
 * Issue 29, item 6: the redaction of config errors is built from what every sink declares
 * secret (PagerDuty's `routing_key` was missing from a hand-kept list), and the secret parts
 * of any URL (user info, key-like path segments, query values) are secrets wherever a URL
 * is shown. Every secret here carries "SECRET", so a part of one is caught as well.
 */
const ROUTING_KEY = "SECRETpd0123456789abcdefghijklmn"; // 32 letters and digits, as PagerDuty's are
const dir = tempDir("kaiawatch-url-secrets-");
afterAll(() => dir.remove());

const PAGERDUTY_BROKEN = `watches:\n  - { name: w, every_block: true }\nrules:\n  - { name: r, watch: w, notify: [pd] }\nsinks:\n  pd:\n    type: pagerduty\n    routing_key: ${ROUTING_KEY}\n      severity: error\n`;

describe("secret keys come from the sinks' declarations", () => {
  it("every key a sink declares secret is hidden in config errors", async () => {
    const { SECRET_KEYS } = await import("../../src/config/document-secrets.js");
    for (const definition of SINK_DEFINITIONS) for (const path of definition.secretKeys) expect(SECRET_KEYS.has(path.split(".").at(-1) ?? path), `${definition.type}.${path}`).toBe(true);
    expect(SECRET_KEYS.has("routing_key")).toBe(true);
  });

  it("a PagerDuty routing_key followed by a mis-indented line: the error names the place, never the key", () => {
    expect(ROUTING_KEY).toMatch(/^[A-Za-z0-9]{32}$/);
    const error = configErrorOf(() => parseConfigText(PAGERDUTY_BROKEN, { fileName: "config.yaml", env: {} }));
    const everything = [error.message, error.details ?? "", error.format(), JSON.stringify(error.issues)].join("\n");
    expect(everything).toContain("routing_key");
    expect(everything).not.toContain("SECRET");
    // A daemon refusing this file on SIGHUP adds these to its scrubber before logging the refusal.
    expect(error.secrets.some((secret) => secret.includes(ROUTING_KEY))).toBe(true);
  });

  it("kaiawatch validate prints no routing_key", async () => {
    const path = join(dir.path, "pd.yaml");
    writeFileSync(path, PAGERDUTY_BROKEN);
    const io = memoryIO();
    expect(await main(["validate", "--config", path], io)).toBe(2);
    // A syntax error has no key path (the tree after it is a guess): the lines show the place.
    expect(io.err()).toContain(`${path}:9:7 YAML syntax error`);
    expect(io.err()).toContain("routing_key: [redacted]");
    expect(io.out() + io.err()).not.toContain("SECRET");
  });
});

describe("the secret parts of a URL", () => {
  it("user info, key-like path segments and query values are secrets; names are not", async () => {
    const { redactUrl, secretsOfUrl } = await import("../../src/common/url-secrets.js");
    const url = "https://alice:SECRETpass99@rpc.example.com/kaia-mainnet/v3/9f3cSECRET0a1b2c3d4e5f?apikey=qsSECRET42&chain=8217";
    const secrets = secretsOfUrl(url);
    for (const part of ["alice", "SECRETpass99", "9f3cSECRET0a1b2c3d4e5f", "qsSECRET42", "8217"]) expect(secrets).toContain(part);
    for (const part of ["kaia-mainnet", "v3", "rpc.example.com", "apikey"]) expect(secrets).not.toContain(part);
    expect(redactUrl(url)).toBe("https://[redacted]@rpc.example.com/kaia-mainnet/v3/[redacted]?apikey=[redacted]&chain=[redacted]");
    expect(redactUrl("https://mainnet-oapi.kaiascan.io")).toBe("https://mainnet-oapi.kaiascan.io");
    expect(redactUrl("https://public-en.node.kaia.io/")).toBe("https://public-en.node.kaia.io/");
    expect(secretsOfUrl("not a url")).toEqual([]);
  });

  it("kaiawatch validate does not print the user info of explorer.base_url", async () => {
    const path = join(dir.path, "base-url.yaml");
    writeFileSync(path, `explorer: { base_url: "https://kw:SECRETpw1234@oapi.example.com" }\nwatches:\n  - { name: w, every_block: true }\nrules:\n  - { name: r, watch: w, notify: [out] }\nsinks:\n  out: { type: console }\n`);
    const io = memoryIO();
    expect(await main(["validate", "--config", path], io)).toBe(0);
    expect(io.out()).toContain("explorer https://[redacted]@oapi.example.com");
    expect(io.out() + io.err()).not.toContain("SECRET");
  });

  it("a config error does not quote the secret parts of a URL under any key", () => {
    const text = `chain: { rpc_url: "https://rpc.example.com/v2/alchSECRET0123456789?key=qSECRET77", lag_blocks: many }\nwatches:\n  - { name: w, every_block: true }\n`;
    const error = configErrorOf(() => parseConfigText(text, { fileName: "config.yaml", env: {} }));
    expect(error.secrets).toContain("alchSECRET0123456789");
    expect(error.secrets).toContain("qSECRET77");
  });

  it("the loaded config's secrets hold every URL's secret parts, for the scrubber", () => {
    const text = `chain: { rpc_url: "https://rpc.example.com/v3/9f3cSECRET0a1b2c3d4e5f?apikey=qsSECRET42" }\nexplorer: { base_url: "https://kw:SECRETpw1234@oapi.example.com" }\nwatches:\n  - { name: w, every_block: true }\nrules:\n  - { name: r, watch: w, notify: [pd] }\nsinks:\n  pd: { type: pagerduty, routing_key: ${ROUTING_KEY} }\n`;
    const { secrets } = parseConfigText(text, { fileName: "config.yaml", env: {} });
    for (const part of ["9f3cSECRET0a1b2c3d4e5f", "qsSECRET42", "SECRETpw1234", ROUTING_KEY]) expect(secrets).toContain(part);
  });
});

/**
 * Issue 41: a key has no shape to know it by. A 6- or 15-character key of letters, digits,
 * `_` and `-` in chain.rpc_url's path was not taken for one (looksLikeKey wants 16 characters
 * of letters and digits), so it reached every log line and alert that quoted the node's 404.
 * The endpoints' URLs count every part but names as secret.
 */
describe("the secret parts of an endpoint URL", () => {
  const SHORT_KEYS = ["q_7-Zx", "Ab3_x-9Qm2_k-7p"];

  it("every path segment and query value but names: short keys with _ and - are caught, v2, rpc and mainnet are not", async () => {
    const { isUrlName, redactUrl, secretsOfUrl } = await import("../../src/common/url-secrets.js");
    for (const key of SHORT_KEYS) {
      const url = `https://kaia-mainnet.example.com/v2/rpc/${key}?network=mainnet&token=${key}x`;
      const secrets = secretsOfUrl(url, "endpoint");
      expect(secrets).toContain(key);
      expect(secrets).toContain(`${key}x`);
      // The path up to the key: a node's 404 quotes it, caught even for a key below the scrubber's 6 characters.
      expect(secrets).toContain(`/v2/rpc/${key}`);
      for (const name of ["v2", "rpc", "mainnet", "kaia-mainnet.example.com"]) expect(secrets).not.toContain(name);
      expect(redactUrl(url)).toBe("https://kaia-mainnet.example.com/v2/rpc/[redacted]?network=[redacted]&token=[redacted]");
      // Any other URL (a link in a template) keeps its ids: only key-like parts count there.
      expect(secretsOfUrl(url)).not.toContain(key);
    }
    for (const name of ["v2", "v1.1", "rpc", "public-en", "kaia-mainnet-archive"]) expect(isUrlName(name)).toBe(true);
    for (const key of [...SHORT_KEYS, "abc_def", "Mainnet", "v2beta", "8217"]) expect(isUrlName(key)).toBe(false);
  });

  it("the loaded config's secrets hold a short key of chain.rpc_url's path, and no name", () => {
    for (const key of SHORT_KEYS) {
      const text = `chain: { rpc_url: "https://kaia-mainnet.example.com/v2/${key}?network=mainnet" }\nwatches:\n  - { name: w, every_block: true }\nrules:\n  - { name: r, watch: w, notify: [out] }\nsinks:\n  out: { type: console }\n`;
      const { secrets } = parseConfigText(text, { fileName: "config.yaml", env: {} });
      expect(secrets).toContain(key);
      for (const name of ["v2", "mainnet"]) expect(secrets).not.toContain(name);
    }
  });

  it("a config error does not quote a short key of chain.rpc_url's path", () => {
    for (const key of SHORT_KEYS) {
      const text = `chain: { rpc_url: "https://rpc.example.com/v2/${key}", lag_blocks: many }\nwatches:\n  - { name: w, every_block: true }\n`;
      const error = configErrorOf(() => parseConfigText(text, { fileName: "config.yaml", env: {} }));
      expect(error.secrets).toContain(key);
      expect(error.format()).not.toContain(key);
    }
  });
});
