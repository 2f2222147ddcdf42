import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import { tempDir } from "../helpers/harness.js";
import { runCli } from "../helpers/run-cli.js";

/**
 * Issue 28: the token watches' mistakes (a contract that is not a token, an amount in a unit
 * the token does not have) are config errors that `validate` reports, every one in one run,
 * each at its file:line:column, as `run` and `once` do; a stranger's symbol quoted in them is
 * made inert as in every sink.
 */
const WALLET = "0x1111111111111111111111111111111111111111";
const INVISIBLE_OR_BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u200B-\u200D\u2060\uFEFF]/;

let sim: Simulator;
let dir: ReturnType<typeof tempDir>;
let path: string;
let text: string;
beforeAll(async () => {
  // Hostile: the STK token's symbol() answers zero-width characters among its letters.
  sim = await createSimulator({ seed: 5, hostile: true, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  dir = tempDir();
  const [, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
  const notToken = sim.addresses.wallets[0] as string;
  text = `explorer: { base_url: "${sim.url}" }
chain: { rpc_url: "${sim.rpcUrl}" }
store: { path: "${join(dir.path, "store.db")}" }
status: { listen: false }
watches:
  - { name: hot, account: "${WALLET}", tokens: ["${usdt}", "${stk}"] }
  - { name: payer, balance: ["${WALLET}"], tokens: ["${notToken}"] }
  - { name: reserve, balance: ["${WALLET}"], tokens: ["${usdt}"] }
rules:
  - { name: big, watch: hot, notify: [out], when: { amount: { gte: "1000 USDC" } } }
  - { name: payer-low, watch: payer, notify: [out], when: { balance: { lt: "1 KAIA" } } }
  - { name: reserve-low, watch: reserve, notify: [out], when: { balance: { lt: "1000 USDC" } } }
sinks:
  out: { type: console }
`;
  path = join(dir.path, "config.yaml");
  writeFileSync(path, text);
});
afterAll(async () => {
  await sim.close();
  dir.remove();
});

/** "path:line:column key": where `needle` starts in the config (1-based, as the loader counts). */
function at(needle: string, key: string): string {
  const offset = text.indexOf(needle);
  const before = text.slice(0, offset);
  return `${path}:${before.split("\n").length}:${offset - before.lastIndexOf("\n")} ${key}: `;
}

describe("token config errors", () => {
  it("are reported by validate, all in one run, each at its file:line:column, with a hostile symbol inert", async () => {
    const { code, out, err } = await runCli("validate", "--config", path);
    expect(out).toBe("");
    expect(code).toBe(2);
    const lines = err.split("\n").filter((line) => located(line));
    // The header, then one line per problem (the token rule's, once for each of its two tokens).
    expect(err.split("\n")[0]).toBe(`${path}: 4 errors in the configuration:`);
    expect(lines, err).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`^${escape(at(`"${sim.addresses.wallets[0] as string}"`, "watches[1].tokens[0]"))}0x[0-9a-f]{40} is not a KIP-7 token`));
    expect(lines[1]).toContain(at('"1000 USDC" } } }\n  - { name: payer', "rules[0].when.amount.gte"));
    expect(lines[1]).toMatch(/unknown unit "USDC"/);
    expect(lines[2]).toContain(at('"1000 USDC" } } }\n  - { name: payer', "rules[0].when.amount.gte"));
    expect(lines[3]).toContain(at('"1000 USDC" } } }\nsinks', "rules[2].when.balance.lt"));
    // The STK symbol quoted among the known ones: its zero-width characters removed.
    expect(err).toMatch(/"zerowidthjoiner"/);
    expect(err).not.toMatch(INVISIBLE_OR_BIDI);
  });

  it("stop once (and run) before anything runs, with the same located errors", async () => {
    const validate = await runCli("validate", "--config", path);
    const once = await runCli("once", "--config", path);
    expect(once.code).toBe(2);
    expect(once.err.split("\n").filter((line) => located(line))).toEqual(validate.err.split("\n").filter((line) => located(line)));
  });
});

/** A problem's line: "path:line:column …". */
const located = (line: string) => line.startsWith(path) && /^:\d+:\d+ /.test(line.slice(path.length));

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
