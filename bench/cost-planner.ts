/**
 * The planner's choice on three configs, in credits a day: the chosen plan (planCredits, the
 * daemon's own sources), today's plan before the planner (one source per watch and filter:
 * the planner's "own" alternative), and a theoretical minimum worked out here from the
 * spec's prices alone, without the planner. Target: chosen / minimum ≤ 1.02.
 *
 * The minimum, per config, at one block a second and one tick every 10 s (8,640 ticks):
 * - twenty wallets' internal transactions: some source must see every internal transaction
 *   of twenty accounts every 10 s; operation 7 is PRO_PLUS only (and 20 credits a tick per
 *   wallet), so on FREE the only one is operation 8, which costs 1 credit a block whatever
 *   the schedule: 86,400.
 * - one contract with four events: at least one operation-11 request (3 credits) per tick sees
 *   them all: 8,640 × 3.
 * - a collection watch beside account watches with nft_contract of that collection: the
 *   collection watch alone needs one operation-4 request (5 credits) a tick, and it sees
 *   every transfer the account watches need: 8,640 × 5.
 */
import { planCredits } from "../src/watch/credit-plan.js";
import { report, type BenchFigure } from "./lib.js";
import { configOf, round } from "./support.js";

const TICKS = 86_400 / 10;
const address = (i: number) => `0x${(0x1000 + i).toString(16).padStart(40, "0")}`;
const COLLECTION = address(900);
const CONTRACT = address(800);
const base = {
  explorer: { base_url: "http://127.0.0.1:1", requests_per_second: 5 },
  chain: { rpc_url: "http://127.0.0.1:1", lag_blocks: 0 },
  store: { path: "/nonexistent/store.json" },
  status: { listen: false },
  defaults: { schedule: "*/10 * * * * *", start: "latest", jitter: "0s" },
  sinks: { out: { type: "console" } },
};

interface Scenario {
  name: string;
  config: unknown;
  minimum: number;
}

const wallets = Array.from({ length: 20 }, (_, i) => ({ name: `wallet-${i}`, account: address(i), sources: ["internal_transactions"] }));
const collectionAccounts = Array.from({ length: 4 }, (_, i) => ({ name: `holder-${i}`, account: address(100 + i), nft_contract: COLLECTION }));
const SCENARIOS: Scenario[] = [
  {
    name: "twenty wallets, internal transactions every 10 s (FREE)",
    config: { ...base, watches: wallets, rules: wallets.map((w) => ({ name: `${w.name}-fails`, watch: w.name, when: { status: "Fail" }, notify: ["out"] })) },
    minimum: 86_400 * 1,
  },
  {
    name: "one contract, four events",
    config: {
      ...base,
      watches: [{ name: "token", contract: CONTRACT, events: ["Transfer(address,address,uint256)", "Approval(address,address,uint256)", "Mint(address,uint256)", "Burn(address,uint256)"] }],
      rules: [{ name: "all", watch: "token", notify: ["out"] }],
    },
    minimum: TICKS * 3,
  },
  {
    name: "a collection watch and four account watches of the collection",
    config: {
      ...base,
      watches: [{ name: "collection", collection: COLLECTION }, { name: "rare", collection: COLLECTION, token_id: "7" }, ...collectionAccounts],
      rules: [
        { name: "mints", watch: "collection", when: { mint: true }, notify: ["out"] },
        { name: "rare", watch: "rare", notify: ["out"] },
        ...collectionAccounts.map((w) => ({ name: `${w.name}-moves`, watch: w.name, notify: ["out"] })),
      ],
    },
    minimum: TICKS * 5,
  },
];

export function runPlannerCost(options: { write?: boolean } = {}): void {
  const figures: BenchFigure[] = [];
  for (const scenario of SCENARIOS) {
    const plan = planCredits(configOf(scenario.config), { dayMs: Date.UTC(2026, 0, 5) });
    const own = plan.choices.reduce((sum, c) => sum + c.own.creditsPerDay, 0);
    const ratio = plan.creditsPerDay / scenario.minimum;
    figures.push(
      { name: `${scenario.name}: credits/day, chosen plan`, value: plan.creditsPerDay, unit: "credits", baseline: scenario.minimum },
      { name: `${scenario.name}: credits/day, one source per watch (today's plan)`, value: own, unit: "credits" },
      { name: `${scenario.name}: chosen / minimum`, value: round(ratio, 4), unit: "ratio", baseline: 1, target: "≤ 1.02", ok: ratio <= 1.02 },
      { name: `${scenario.name}: saving against today's plan`, value: own - plan.creditsPerDay, unit: `credits/day (${round((1 - plan.creditsPerDay / own) * 100, 1)}%)` },
    );
  }
  report("cost-planner", figures, [
    "Credits a day from the plan (no chain): the chosen plan is planCredits() of the config, which costs the daemon's own sources; today's plan is one source per watch and filter (the planner's own alternative); the minimum (baseline) is worked out in bench/cost-planner.ts from the spec's prices alone.",
    "explorer.api_plan FREE: operation 7 is not available, so today's plan for the wallets could not run at all on FREE (it is costed anyway for comparison).",
  ], options);
}
