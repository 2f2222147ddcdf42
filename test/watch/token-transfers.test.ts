import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDaemon, type Daemon } from "../../src/daemon/create-daemon.js";
import { EVENTS, padAddress, uint256Hex } from "../../src/simulator/abi.js";
import { createSimulator, type Simulator } from "../../src/simulator/index.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { TokenConfigError } from "../../src/watch/config-tokens.js";
import { configFromText, quietCommon, readJsonLines, tempDir } from "../helpers/harness.js";
import { simulatorHead } from "../helpers/simulator-config.js";

/**
 * Token transfers of a wallet over three tokens with 18, 6 and 0 decimals: each threshold
 * is exact to the token's last unit, only the wallet's transfers count, and a symbol names
 * its own token only.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WALLET = "0x00000000000000000000000000000000000a11e7";
const OTHER = "0x00000000000000000000000000000000000b0b00";
const STRANGER = "0x00000000000000000000000000000000000c0c00";

function transfer(token: string, from: string, to: string, value: bigint) {
  return {
    contract_address: token,
    type: EVENTS.transfer20.name,
    topics: [EVENTS.transfer20.topic0, padAddress(from), padAddress(to)],
    data: `0x${uint256Hex(value)}`,
    items: [
      { name: "from", value: from },
      { name: "to", value: to },
      { name: "value", value: value.toString() },
    ],
  };
}

async function setup(rules: string | ((sim: Simulator) => string), tokens?: (sim: Simulator) => string[]): Promise<{ sim: Simulator; daemon: Daemon; alerts: () => AlertDocument[] }> {
  const sim = await createSimulator({ seed: 11, initialBlocks: 3, density: { eventLogs: 0, nftTransfers: 0, internalTransactions: 0 } });
  cleanups.push(() => sim.close());
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const [wkaia, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
  const list = tokens ? tokens(sim) : [wkaia, usdt, stk];
  const config = configFromText(`
${simulatorHead(sim, { storePath: join(dir.path, "store.json"), requestsPerSecond: 100000 })}
defaults: { start: ${sim.head() + 1}, schedule: "* * * * * *", jitter: 0s }
watches:
  - { name: hot, account: "${WALLET}", tokens: [${list.map((t) => `"${t}"`).join(", ")}] }
rules:
${typeof rules === "string" ? rules : rules(sim)}
sinks:
  out: { type: file, path: ${join(dir.path, "alerts.jsonl")} }
`);
  const daemon = await createDaemon(quietCommon(), { config });
  cleanups.push(() => daemon.stop());
  return { sim, daemon, alerts: () => readJsonLines(join(dir.path, "alerts.jsonl")) };
}

describe("token transfers of a wallet", () => {
  it("fires on amounts exact to the last unit of tokens with 18, 6 and 0 decimals, for the wallet's transfers only", async () => {
    const { sim, daemon, alerts } = await setup(`
  - { name: usdt-out, watch: hot, notify: [out], when: { direction: out, amount: { gte: "50000 USDT" } } }
  - { name: wkaia-big, watch: hot, notify: [out], when: { amount: { gt: "1 WKAIA" } } }
  - { name: stk-any, watch: hot, notify: [out], when: { amount: { gte: "7 tokens" }, contract: "${"0x" + "0".repeat(40)}" } }
  - { name: stk-seven, watch: hot, notify: [out], when: { amount: { gte: "7 STK" } } }
  - { name: usdt-templated, watch: hot, notify: [out], when: { amount: { gte: "50000 USDT" }, direction: out }, summary: "{{direction}} {{amount}} {{token_symbol}} to {{to}}" }`);
    const [wkaia, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
    expect(daemon.plan.sources.map((s) => s.definition.address).sort()).toEqual([wkaia, usdt, stk].sort());
    sim.addBlock({
      eventLogs: [
        transfer(usdt, WALLET, OTHER, 49_999_999_999n), // 49,999.999999 USDT: one unit short
        transfer(usdt, WALLET, OTHER, 50_000_000_000n), // 50,000 USDT out: fires
        transfer(usdt, OTHER, WALLET, 90_000_000_000n), // in: not "out"
        transfer(usdt, OTHER, STRANGER, 90_000_000_000n), // not the wallet's
        transfer(wkaia, OTHER, WALLET, 10n ** 18n), // exactly 1 WKAIA: not "gt"
        transfer(wkaia, OTHER, WALLET, 10n ** 18n + 1n), // one wei more: fires
        transfer(stk, WALLET, OTHER, 6n),
        transfer(stk, WALLET, WALLET, 7n), // a self-transfer of 7 STK: fires
      ],
    });
    const { scan } = await daemon.runOnce();
    expect(scan.results.filter((r) => r.error !== undefined)).toEqual([]);
    // Sources run side by side: sorted by rule name.
    const got = alerts()
      .map((a) => [a.rule, a.token?.amount, a.token?.symbol, a.summary])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(got).toEqual([
      ["stk-seven", "7", "STK", `7 STK (${stk.slice(0, 6)}…${stk.slice(-4)}) self: 0x0000…11e7 → 0x0000…11e7`],
      ["usdt-out", "50000", "USDT", `50,000 USDT (${usdt.slice(0, 6)}…${usdt.slice(-4)}) out: 0x0000…11e7 → 0x0000…0b00`],
      ["usdt-templated", "50000", "USDT", `out 50000 USDT to ${OTHER}`],
      ["wkaia-big", "1.000000000000000001", "WKAIA", `1.000000000000000001 WKAIA (${wkaia.slice(0, 6)}…${wkaia.slice(-4)}) in: 0x0000…0b00 → 0x0000…11e7`],
    ]);
  });

  it("takes conditions on from, to, direction, amount and token (by symbol or address), indexed like other rules", async () => {
    // Five rules: the source's rule index files those that require a value (to, from, token).
    const { sim, daemon, alerts } = await setup(
      (sim) => `
  - { name: usdt-only, watch: hot, notify: [out], when: { token: USDT, direction: in } }
  - { name: not-usdt, watch: hot, notify: [out], when: { token: { not_in: [USDT] }, amount: { gte: "1 tokens" } } }
  - { name: to-other, watch: hot, notify: [out], when: { to: "${OTHER}" } }
  - { name: from-other-stk, watch: hot, notify: [out], when: { all: [{ from: "${OTHER}" }, { token: { in: [STK, WKAIA] } }] } }
  - { name: by-address, watch: hot, notify: [out], when: { token: "${sim.addresses.tokens[1] as string}", amount: { lt: "0.00001 USDT" } } }`,
    );
    const [wkaia, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
    sim.addBlock({
      eventLogs: [
        transfer(usdt, OTHER, WALLET, 5n), // usdt-only (in), by-address (0.000005 USDT < 0.00001)
        transfer(wkaia, WALLET, OTHER, 10n ** 18n), // not-usdt (1 WKAIA), to-other
        transfer(stk, OTHER, WALLET, 3n), // not-usdt, from-other-stk
        transfer(stk, STRANGER, OTHER, 9n), // not the wallet's: nothing
      ],
    });
    const { scan } = await daemon.runOnce();
    expect(scan.results.filter((r) => r.error !== undefined)).toEqual([]);
    const got = alerts()
      .map((a) => `${a.rule} ${a.token?.symbol} ${a.token?.amount}`)
      .sort();
    expect(got).toEqual(["by-address USDT 0.000005", "from-other-stk STK 3", "not-usdt STK 3", "not-usdt WKAIA 1", "to-other WKAIA 1", "usdt-only USDT 0.000005"]);
  });

  it("reads an argument's bound in the unit written: a token's symbol, base_units or KAIA (issue 41)", async () => {
    const { sim, daemon, alerts } = await setup(`
  - { name: args-usdt, watch: hot, notify: [out], when: { "args.value": { gte: "50000 USDT" } } }
  - { name: args-base, watch: hot, notify: [out], when: { "args.value": { gt: "1000000 base_units" } } }
  - { name: args-kaia, watch: hot, notify: [out], when: { "args.value": { gte: "1 KAIA" } } }`);
    const [wkaia, usdt, , stk] = sim.addresses.tokens as [string, string, string, string];
    sim.addBlock({
      eventLogs: [
        transfer(usdt, WALLET, OTHER, 50_000_000_000n), // 50,000 USDT: args-usdt, args-base
        transfer(usdt, WALLET, OTHER, 49_999_999_999n), // one unit short of 50,000 USDT: args-base
        transfer(wkaia, OTHER, WALLET, 10n ** 18n), // 1 WKAIA (18 decimals): args-base, args-kaia; not USDT
        transfer(stk, WALLET, OTHER, 7n), // 7 base units: none
      ],
    });
    const { scan } = await daemon.runOnce();
    expect(scan.results.filter((r) => r.error !== undefined)).toEqual([]);
    const got = alerts()
      .map((a) => `${a.rule} ${a.token?.symbol} ${a.token?.amount}`)
      .sort();
    expect(got).toEqual(["args-base USDT 49999.999999", "args-base USDT 50000", "args-base WKAIA 1", "args-kaia WKAIA 1", "args-usdt USDT 50000"]);
  });

  it("refuses an argument's bound without a unit on a token watch, naming the watch's symbols as one of the ways", () => {
    const error = (() => {
      try {
        configFromText(`
explorer: { base_url: "http://127.0.0.1:1" }
chain: { rpc_url: "http://127.0.0.1:2" }
watches:
  - { name: hot, account: "${WALLET}", tokens: ["${"0x" + "7".repeat(40)}"] }
rules:
  - { name: big, watch: hot, notify: [out], when: { "args.value": { gt: 1000000 } } }
sinks:
  out: { type: console }
`);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toContain('"1000000 base_units" (the integer as the contract holds it: what a number without a unit meant until now), "1000000 KAIA" (an 18-decimal amount), or "1000000 USDT" (whole tokens, by the symbol of one of the watch\'s tokens, or "1000000 tokens")');
  });

  it("refuses a token symbol that none of the watch's tokens has, naming the key path", async () => {
    const error = await setup(`  - { name: typo, watch: hot, notify: [out], when: { token: { in: [USDT, USDC] } } }`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenConfigError);
    expect((error as TokenConfigError).problems).toEqual([
      'rules[0].when.token.in[1]: rule "typo", when.token.in[1]: token: "USDC" is neither an address nor the symbol of a token of this watch ("STK", "USDT", "WKAIA"; letter case counts)',
    ]);
  });

  it("refuses a cooldown_key or group.by naming a decoded field, which would read as one key for every alert", () => {
    const text = (keys: string) => `
chain: { rpc_url: "https://rpc.example" }
status: { listen: false }
watches:
  - { name: hot, account: "${WALLET}", tokens: ["${OTHER}"] }
rules:
  - { name: r, watch: hot, notify: [out], ${keys} }
sinks:
  out: { type: console }
`;
    expect(() => configFromText(text(`cooldown: 1h, cooldown_key: to`))).toThrow(/rules\[0\]\.cooldown_key: rule "r": to of a token transfer is decoded from the log, not a field of its record; write topics\.2/);
    expect(() => configFromText(text(`group: { window: 1m, by: amount }`))).toThrow(/rules\[0\]\.group\.by: rule "r": amount of a token transfer .*write data/);
    expect(() => configFromText(text(`cooldown: 1h, cooldown_key: topics.2, group: { window: 1m, by: contract }`))).not.toThrow();
  });

  it("refuses, naming the key path, a token that is not a KIP-7 token", async () => {
    await expect(setup(`  - { name: any, watch: hot, notify: [out] }`, (sim) => [sim.addresses.tokens[1] as string, sim.addresses.wallets[0] as string])).rejects.toThrow(
      /watches\[0\]\.tokens\[1\]: 0x[0-9a-f]{40} is not a KIP-7 token/,
    );
  });

  it("refuses an amount finer than the token's decimals, or in a symbol none of the watch's tokens has", async () => {
    const error = await setup(`
  - { name: fine, watch: hot, notify: [out], when: { amount: { gte: "0.5 tokens" } } }
  - { name: typo, watch: hot, notify: [out], when: { amount: { gte: "5 USDC" } } }`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenConfigError);
    const problems = (error as TokenConfigError).problems.join("\n");
    expect(problems).toMatch(/rules\[0\]\.when\.amount\.gte: .*has 0 decimals/);
    expect(problems).toMatch(/rules\[1\]\.when\.amount\.gte: .*unknown unit "USDC"/);
  });
});
