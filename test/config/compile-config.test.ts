import { describe, expect, it } from "vitest";
import { compileConfig, compileTokenRules } from "../../src/config/compile-config.js";
import type { Config } from "../../src/config/types.js";
import type { TokenInfo } from "../../src/chain/token-info.js";
import { balanceWatchesOf } from "../../src/watch/balance-watches.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { loadedFromText } from "../helpers/harness.js";
import { EXCHANGE, HOT_WALLET, nftTransfer } from "../rules/fixtures.js";

const USDT = `0x${"c".repeat(40)}`;
const PAYER = `0x${"d".repeat(40)}`;

const { config, compiled } = loadedFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9", explorer_url: "https://kaiascan.io" }
status: { listen: false }
defaults: { schedule: "*/5 * * * * *" }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [internal_transactions], tokens: ["${USDT}"] }
  - { name: payer, balance: ["${PAYER}"], tokens: ["${USDT}"], schedule: "*/30 * * * * *" }
  - { name: payer-kaia, balance: ["${PAYER}"], schedule: "*/5 * * * * *" }
rules:
  - { name: big-outflow, watch: hot, source: internal_transactions, when: { all: [ { from: "${HOT_WALLET}" }, { amount: { gte: "1000 KAIA" } } ] }, notify: [out] }
  - { name: usdt-out, watch: hot, source: event_logs, when: { amount: { gte: "5 USDT" } }, notify: [out] }
  - { name: payer-usdt-low, watch: payer, notify: [out], when: { balance: { lt: "5 USDT" } } }
  - { name: payer-kaia-low, watch: payer-kaia, notify: [out], when: { balance: { lt: "1 KAIA" } } }
sinks:
  out: { type: console }
`);
const tokens = new Map<string, TokenInfo>([[USDT, { address: USDT, decimals: 6, symbol: "USDT" }]]);

describe("compileConfig", () => {
  it("is what the plan runs: each source's rule tests with the condition compiled at load", () => {
    const rule = compiled.rules.get("big-outflow");
    const daemon = planFromConfig(config, { compiled }).sources.flatMap((s) => s.rules).find((r) => r.name === "big-outflow")!;
    const explain = planFromConfig(config, { rules: [config.rules[0]!], compiled }).sources[0]!.rules[0]!;
    expect(daemon.condition).toBe(rule?.condition?.node);
    expect(explain.condition).toBe(daemon.condition);
  });

  it("compiles each schedule once, by pattern: the balance monitor runs the one the engine is given", () => {
    expect([...compiled.schedules.keys()]).toEqual(["*/5 * * * * *", "*/30 * * * * *"]);
    const [payer, payerKaia] = balanceWatchesOf(config, compileTokenRules(config, compiled, tokens).compiled);
    expect(payer?.schedule).toBe(compiled.schedules.get("*/30 * * * * *"));
    expect(payerKaia?.schedule).toBe(compiled.schedules.get("*/5 * * * * *"));
  });

  it("compiles the token rules in their tokens' units once they are read, keeping the rest as compiled", () => {
    const before = compiled.rules.get("payer-usdt-low")?.balance;
    // At load a token amount has no decimals to be read in: only its shape is checked.
    expect(before?.tests).toEqual([]);
    const { compiled: withTokens, issues } = compileTokenRules(config, compiled, tokens);
    expect(issues).toEqual([]);
    expect(withTokens.tokens).toBe(tokens);
    const balance = withTokens.rules.get("payer-usdt-low")!.balance!;
    expect(balance.tests.map((t) => [t.asset, t.holds(4_999_999n), t.holds(5_000_000n)])).toEqual([[USDT, true, false]]);
    expect(withTokens.rules.get("usdt-out")?.tokenConditions?.has(USDT)).toBe(true);
    // A watch without tokens, and a rule on no token, are not compiled again.
    expect(withTokens.rules.get("payer-kaia-low")).toBe(compiled.rules.get("payer-kaia-low"));
    expect(withTokens.rules.get("big-outflow")).toBe(compiled.rules.get("big-outflow"));
  });

  it("reports a token amount finer than the token's decimals at its key path", () => {
    const fine = loadedFromText(
      `explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
status: { listen: false }
watches: [ { name: payer, balance: ["${PAYER}"], tokens: ["${USDT}"] } ]
rules: [ { name: dust, watch: payer, notify: [out], when: { balance: { lt: "0.5 USDT" } } } ]
sinks: { out: { type: console } }
`,
    );
    const coarse = compileTokenRules(fine.config, fine.compiled, new Map([[USDT, { address: USDT, decimals: 0, symbol: "USDT" }]]));
    expect(coarse.issues).toHaveLength(1);
    expect(coarse.issues[0]?.path).toEqual(["rules", 0, "when", "balance", "lt"]);
  });

  it("compiles rules written alike once, each testing direction against its own watch's account", () => {
    const alike = loadedFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9" }
status: { listen: false }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [nft_transfers] }
  - { name: exchange, account: "${EXCHANGE}", sources: [nft_transfers] }
  - { name: usdt-a, account: "${HOT_WALLET}", tokens: ["${USDT}"] }
  - { name: usdt-b, account: "${EXCHANGE}", tokens: ["${USDT}"] }
rules:
  - { name: hot-out, watch: hot, when: { direction: out }, notify: [out] }
  - { name: exchange-out, watch: exchange, when: { direction: out }, notify: [out] }
  - { name: exchange-in, watch: exchange, when: { direction: in }, notify: [out] }
  - { name: usdt-a-big, watch: usdt-a, source: event_logs, when: { amount: { gte: "5 USDT" } }, notify: [out] }
  - { name: usdt-b-big, watch: usdt-b, source: event_logs, when: { amount: { gte: "5 USDT" } }, notify: [out] }
sinks: { out: { type: console } }
`);
    const condition = (name: string) => alike.compiled.rules.get(name)?.condition;
    expect(condition("exchange-out")).toBe(condition("hot-out"));
    expect(condition("exchange-in")).not.toBe(condition("hot-out"));
    const withTokens = compileTokenRules(alike.config, alike.compiled, tokens).compiled;
    expect(withTokens.rules.get("usdt-b-big")?.tokenConditions?.get(USDT)).toBe(withTokens.rules.get("usdt-a-big")?.tokenConditions?.get(USDT));
    // The shared condition is tested against each watch's account: hot to exchange is out for hot, in for exchange.
    const rules = planFromConfig(alike.config, { compiled: withTokens }).sources.flatMap((s) => s.rules);
    const transfer = nftTransfer({ from: HOT_WALLET, to: EXCHANGE });
    expect(rules.filter((rule) => rule.test(transfer)).map((rule) => rule.name).sort()).toEqual(["exchange-in", "hot-out"]);
  });

  it("compiles apart conditions that JSON would write alike, so each keeps its own problems", () => {
    // JSON drops an undefined key: keyed by it, the second would reuse the first's compile and pass.
    const built = {
      ...config,
      watches: [{ name: "hot-wallet", kind: "account", account: HOT_WALLET, tokens: [], sources: ["internal_transactions"], schedule: "*/5 * * * * *" }],
      rules: [
        { name: "failed", watch: "hot-wallet", source: "internal_transactions", when: { status: "Fail" } },
        { name: "failed-undefined", watch: "hot-wallet", source: "internal_transactions", when: { status: "Fail", amount: undefined } },
      ],
    } as unknown as Config;
    const { issues, compiled: partial } = compileConfig(built);
    expect(issues.map((i) => i.path)).toEqual([["rules", 1, "when", "amount"]]);
    expect([...partial.rules.keys()]).toEqual(["failed"]);
  });

  it("allows direction on account watches only, and leaves wrong watches and sources to the loader", () => {
    const loose = {
      ...config,
      watches: [
        { name: "hot-wallet", kind: "account", account: HOT_WALLET, tokens: [], schedule: "*/5 * * * * *" },
        { name: "collection", kind: "collection", collection: "0x…", schedule: "*/5 * * * * *" },
      ],
      rules: [
        { name: "incoming", watch: "hot-wallet", source: "nft_transfers", when: { direction: "in" } },
        { name: "collection-in", watch: "collection", source: "nft_transfers", when: { direction: "in" } },
        { name: "unknown-watch", watch: "nope", source: "nft_transfers", when: { bad: 1 } },
        { name: "bad-source", watch: "hot-wallet", source: "blocks", when: { bad: 1 } },
        { name: "every-call", watch: "hot-wallet", source: "internal_transactions" },
        { name: "typo", watch: "hot-wallet", source: "internal_transactions", when: { status: "Failed" } },
      ],
    } as unknown as Config;
    const { issues, compiled: partial } = compileConfig(loose);
    expect(issues.map((i) => i.path)).toEqual([
      ["rules", 1, "when", "direction"],
      ["rules", 5, "when", "status"],
    ]);
    expect(issues[0]?.message).toMatch(/^rule "collection-in", when\.direction: /);
    expect([...partial.rules.keys()]).toEqual(["incoming", "every-call"]);
  });
});
