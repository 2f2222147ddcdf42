import { describe, expect, it } from "vitest";
import { planCredits } from "../../src/watch/credit-plan.js";
import { planFromConfig } from "../../src/watch/plan-from-config.js";
import { definitionsOfWatch } from "../../src/watch/plan.js";
import type { RecordFamily } from "../../src/model/record.js";
import { FAMILY_OF_OPERATION, sourceKey } from "../../src/watch/source.js";
import { configFromText } from "../helpers/harness.js";
import { COLLECTION, HOT_WALLET, TOKEN, internalTx, nftTransfer } from "../rules/fixtures.js";

/** The one plan every caller (daemon, replay, explain, plan) takes its sources and compiled rules from. */
const config = configFromText(`
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9", explorer_url: "https://kaiascan.io" }
status: { listen: false }
watches:
  - { name: hot, account: "${HOT_WALLET}", sources: [nft_transfers, internal_transactions], schedule: "*/5 * * * * *" }
  - { name: hot-again, account: "${HOT_WALLET}", schedule: "*/30 * * * * *" }
  - { name: token, contract: "${TOKEN}", events: ["Transfer(address,address,uint256)"] }
  - { name: idle, collection: "${COLLECTION}" }
rules:
  - { name: big-outflow, watch: hot, source: internal_transactions, when: { all: [ { from: "${HOT_WALLET}" }, { amount: { gte: "1000 KAIA" } } ] }, notify: [out] }
  - { name: nft-in, watch: hot, source: nft_transfers, when: { direction: in }, notify: [out] }
  - { name: nft-in-again, watch: hot-again, notify: [out] }
  - { name: any-token-log, watch: token, notify: [out] }
sinks:
  out: { type: console }
`);

const keyOf = (watch: string, family: RecordFamily) =>
  sourceKey(definitionsOfWatch(config.chain.network, config.watches.find((w) => w.name === watch)!).find((d) => FAMILY_OF_OPERATION[d.operation] === family)!);

describe("planFromConfig", () => {
  it("plans one source per definition, shared by the rules of every watch that yields it, and skips watches no rule reads", () => {
    const plan = planFromConfig(config);
    expect(plan.idleWatches).toEqual(["idle"]);
    expect(plan.sources.map((s) => [s.watch, s.family, s.rules.map((r) => r.name)])).toEqual([
      ["hot", "nft_transfers", ["nft-in", "nft-in-again"]],
      ["hot", "internal_transactions", ["big-outflow"]],
      ["token", "event_logs", ["any-token-log"]],
    ]);
    // The shared source follows the first watch's schedule.
    expect(plan.sources[0]?.schedule).toBe("*/5 * * * * *");
    expect(plan.sources[0]?.key).toBe(keyOf("hot-again", "nft_transfers"));
  });

  it("compiles each rule against its own watch (direction is relative to the watched account) and builds its alerts", () => {
    const plan = planFromConfig(config);
    const bigOutflow = plan.sources[1]!.rules[0]!;
    expect(bigOutflow.test(internalTx({ amount: "1500" }))).toBe(true);
    expect(bigOutflow.test(internalTx({ amount: "999.999999999999999999" }))).toBe(false);
    expect(bigOutflow.condition?.type).toBe("all");
    const nftIn = plan.sources[0]!.rules[0]!;
    expect(nftIn.test(nftTransfer({ to: HOT_WALLET }))).toBe(true);
    expect(nftIn.test(nftTransfer({ from: HOT_WALLET, to: COLLECTION }))).toBe(false);
    // A rule never matches a record of another family.
    expect(nftIn.test(internalTx())).toBe(false);

    const alert = bigOutflow.toAlert(internalTx({ amount: "1500" }), new Date(Date.UTC(2026, 0, 5)));
    expect(alert).toMatchObject({ rule: "big-outflow", watch: "hot", source: "internal_transactions", network: "mainnet" });
  });

  it("plans only the rules asked for (replay and explain), with that rule's watch's schedule", () => {
    const rule = config.rules.find((r) => r.name === "nft-in-again")!;
    const plan = planFromConfig(config, { rules: [rule] });
    expect(plan.sources.map((s) => [s.key, s.watch, s.schedule, s.rules.map((r) => r.name)])).toEqual([[keyOf("hot", "nft_transfers"), "hot-again", "*/30 * * * * *", ["nft-in-again"]]]);
  });

  it("is what the credit plan costs: the same sources under the same keys", () => {
    const costed = planCredits(config, { dayMs: Date.UTC(2026, 0, 5) });
    expect(costed.sources.map((s) => s.key)).toEqual(planFromConfig(config).sources.map((s) => s.key));
    expect(costed.idleWatches).toEqual(["idle"]);
  });
});
