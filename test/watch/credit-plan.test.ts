import { Cron } from "croner";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { planCredits, type CreditPlan } from "../../src/watch/credit-plan.js";
import { firingsOfDay, longestIntervalSeconds } from "../../src/watch/schedule-firings.js";
import { configFromText, memoryIO, tempDir } from "../helpers/harness.js";

/** The credit planner's arithmetic on configs whose cost can be worked out by hand. */
const SATURDAY = Date.UTC(2025, 5, 7);
const MONDAY = Date.UTC(2025, 5, 9);
const A = "0x1111111111111111111111111111111111111111";
const B = "0x2222222222222222222222222222222222222222";
const C = "0x3333333333333333333333333333333333333333";

function configWith(watches: string, rules: string, explorer = "requests_per_second: 5"): ReturnType<typeof configFromText> {
  return configFromText(`
explorer: { base_url: "http://127.0.0.1:9", ${explorer} }
chain: { rpc_url: "http://127.0.0.1:9" }
status: { listen: false }
watches:
${watches}
rules:
${rules}
sinks:
  out: { type: console }
`);
}

const source = (plan: CreditPlan, watch: string, operationNumber: number) => plan.sources.find((s) => s.watch === watch && s.operationNumber === operationNumber)!;

describe("firingsOfDay", () => {
  it.each(["*/7 */13 9-17 * * MON-FRI", "0 0 * * * *", "30 15 3 * * *", "0 0 0 1 * *", "5,10,45 * 23 * * *", "0 */30 * * * SAT"])("matches croner's own runs for %s", (pattern) => {
    for (const day of [SATURDAY, MONDAY, Date.UTC(2025, 5, 1)]) {
      const cron = new Cron(pattern, { timezone: "UTC", paused: true });
      const expected: number[] = [];
      for (let at = cron.nextRun(new Date(day - 1000)); at && at.getTime() < day + 86_400_000; at = cron.nextRun(at)) expected.push((at.getTime() - day) / 1000);
      expect(firingsOfDay(pattern, day)).toEqual(expected);
    }
  });

  it("gives the longest interval across days and weekdays", () => {
    expect(longestIntervalSeconds("*/10 * * * * *", MONDAY)).toBe(10);
    expect(longestIntervalSeconds("0 0 9 * * *", MONDAY)).toBe(86_400);
    // Friday 17:52:56 to Monday 09:00:00.
    expect(longestIntervalSeconds("*/7 */13 9-17 * * MON-FRI", MONDAY)).toBe(2 * 86_400 + (86_400 - (17 * 3600 + 52 * 60 + 56)) + 9 * 3600);
  });
});

describe("planCredits", () => {
  it("counts one request a tick per windowed source, one a block for operation 8, at the operations' costs", () => {
    const config = configWith(
      `  - { name: hot, account: "${A}", sources: [nft_transfers, internal_transactions], via: own }
  - { name: tok, contract: "${B}", events: ["Transfer(address,address,uint256)"], via: own }
  - { name: blocks, every_block: true }
  - { name: idle, collection: "${C}" }`,
      `  - { name: r1, watch: hot, source: nft_transfers, notify: [out] }
  - { name: r2, watch: hot, source: internal_transactions, notify: [out] }
  - { name: r3, watch: tok, notify: [out] }
  - { name: r4, watch: blocks, notify: [out] }`,
    );
    const plan = planCredits(config, { dayMs: MONDAY });
    // The default schedule, every 10 s: 8,640 ticks a day.
    expect(source(plan, "hot", 3)).toMatchObject({ ticksPerDay: 8640, requestsPerDay: 8640, creditsPerDay: 8640 * 3, creditsPerTick: 3, apiPlan: "FREE" });
    expect(source(plan, "hot", 7)).toMatchObject({ requestsPerDay: 8640, creditsPerDay: 8640 * 20, creditsPerTick: 20, apiPlan: "PRO_PLUS" });
    expect(source(plan, "tok", 11)).toMatchObject({ creditsPerDay: 8640 * 3 });
    expect(source(plan, "blocks", 8)).toMatchObject({ requestsPerDay: 86_400, creditsPerDay: 86_400, creditsPerTick: 10 });
    expect(plan.idleWatches).toEqual(["idle"]);
    expect(plan.creditsPerDay).toBe(8640 * 3 + 8640 * 20 + 8640 * 3 + 86_400);
    expect(plan.requestsPerDay).toBe(3 * 8640 + 86_400);
    expect(plan.budget).toBeUndefined();
    expect(plan.warnings.map((w) => w.code)).toEqual(["pro_plus"]);
    expect(plan.warnings[0]?.message).toContain("operation 7");
  });

  it("splits a tick longer than max_window_blocks into windows, and says so", () => {
    const config = configWith(`  - { name: coll, collection: "${C}", schedule: "0 */30 * * * *" }`, `  - { name: r, watch: coll, notify: [out] }`);
    const plan = planCredits(config, { dayMs: MONDAY });
    // 48 ticks of 1,800 blocks: two windows of at most 1,000 blocks each, 5 credits a request.
    expect(source(plan, "coll", 4)).toMatchObject({ ticksPerDay: 48, requestsPerDay: 96, creditsPerDay: 480, longestIntervalSeconds: 1800 });
    expect(plan.warnings.map((w) => w.code)).toEqual(["window"]);
    expect(plan.warnings[0]?.message).toMatch(/1800 s.*max_window_blocks \(1000\).*2 windows/);
  });

  it("finds the hour the budget runs out, and warns when the rate exceeds requests_per_second", () => {
    // 3 credits a second from 00:00:00: 10,800 credits last exactly one hour.
    const config = configWith(
      `  - { name: tok, contract: "${B}", schedule: "* * * * * *" }
  - { name: blocks, every_block: true }`,
      `  - { name: r, watch: tok, notify: [out] }`,
      "daily_credit_budget: 10800",
    );
    const plan = planCredits(config, { dayMs: MONDAY });
    expect(plan.creditsPerDay).toBe(3 * 86_400);
    expect(plan.budgetExhaustedAt).toBe("2025-06-09T01:00:00.000Z");
    expect(plan.warnings.find((w) => w.code === "budget")?.message).toContain("01:00 UTC");

    const slow = configWith(`  - { name: blocks, every_block: true }`, `  - { name: r, watch: blocks, notify: [out] }`, "requests_per_second: 0.5, daily_credit_budget: 1000000");
    const slowPlan = planCredits(slow, { dayMs: MONDAY });
    expect(slowPlan.budgetExhaustedAt).toBeUndefined();
    expect(slowPlan.warnings.map((w) => w.code)).toEqual(["rate"]);
  });

  it("follows the day's schedule: a weekday watch costs nothing on a Saturday", () => {
    const config = configWith(`  - { name: tok, contract: "${B}", schedule: "0 * 9-17 * * MON-FRI" }`, `  - { name: r, watch: tok, notify: [out] }`);
    // 540 ticks; the first of Monday covers the blocks since Friday 17:59:00 in 1,000-block windows.
    const weekend = 2 * 86_400 + (86_400 - (17 * 3600 + 59 * 60)) + 9 * 3600;
    const monday = planCredits(config, { dayMs: MONDAY });
    expect(monday.creditsPerDay).toBe((539 + Math.ceil(weekend / 1000)) * 3);
    expect(monday.warnings.map((w) => w.code)).toEqual(["window"]);
    const saturday = planCredits(config, { dayMs: SATURDAY });
    expect(saturday.creditsPerDay).toBe(0);
    expect(saturday.warnings.map((w) => w.code)).toEqual(["no_ticks"]);
  });

  it("lists each enrichment's cost per lookup, outside the total", () => {
    const config = configWith(`  - { name: coll, collection: "${C}" }`, `  - { name: r, watch: coll, notify: [out], enrich: [nft, inventory, tx_logs] }`);
    const plan = planCredits(config, { dayMs: MONDAY });
    expect(plan.enrichments.map((e) => [e.kind, e.creditsPerLookup])).toEqual([
      ["nft", 3],
      ["inventory", 5 + 3],
      ["tx_logs", 3],
    ]);
    expect(plan.creditsPerDay).toBe(8640 * 5);
  });
});

describe("kaiawatch plan", () => {
  const dir = tempDir("kaiawatch-plan-");
  afterAll(() => dir.remove());
  const path = join(dir.path, "config.yaml");
  writeFileSync(
    path,
    `
explorer: { base_url: "http://127.0.0.1:9", daily_credit_budget: 100000 }
chain: { rpc_url: "http://127.0.0.1:9" }
watches:
  - { name: hot, account: "${A}", sources: [internal_transactions], via: own }
rules:
  - { name: r, watch: hot, notify: [out] }
sinks:
  out: { type: console }
`,
  );

  it("prints per-source figures, the total against the budget and the warnings", async () => {
    const io = memoryIO();
    expect(await main(["plan", "--config", path, "--date", "2025-06-09"], io)).toBe(0);
    const out = io.out();
    expect(out).toContain("UTC day 2025-06-09");
    // The table fits 100 columns: addresses shortened, ticks a day and credits a tick under --wide.
    expect(out).toMatch(/hot\s+internal transactions of account 0x1111…1111\s+7\s+\*\/10 \* \* \* \* \*\s+172,800$/m);
    const table = out.split("\n").slice(2, out.split("\n").indexOf("", 2));
    expect(table.length).toBeGreaterThan(2);
    for (const line of table) expect(line.length).toBeLessThanOrEqual(100);
    const wide = memoryIO();
    expect(await main(["plan", "--config", path, "--date", "2025-06-09", "--wide"], wide)).toBe(0);
    expect(wide.out()).toMatch(/hot\s+internal transactions of account 0x1{40}\s+7\s+\*\/10 \* \* \* \* \*\s+8,640\s+8,640\s+172,800\s+20/);
    expect(out).toContain("budget: 172,800 of 100,000 credits a day (172.8%)");
    // 100,000 / 20 = 5,000 requests, one every 10 s: the 5,001st at 13:53:20.
    expect(out).toContain("the budget runs out at about 13:53 UTC");
    expect(out).toContain("only the PRO_PLUS API plan has");
  });

  it("prints JSON with --json, and refuses a bad date", async () => {
    const io = memoryIO();
    expect(await main(["plan", "-c", path, "--date", "2025-06-09", "--json"], io)).toBe(0);
    const plan = JSON.parse(io.out()) as CreditPlan;
    expect(plan.creditsPerDay).toBe(172_800);
    expect(plan.budgetExhaustedAt).toBe("2025-06-09T13:53:20.000Z");
    const bad = memoryIO();
    expect(await main(["plan", "-c", path, "--date", "2025-02-30"], bad)).toBe(2);
    expect(bad.err()).toContain("--date must be a day");
  });
});
