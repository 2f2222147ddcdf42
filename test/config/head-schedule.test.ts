import { describe, expect, it } from "vitest";
import { formatPlan } from "../../src/cli/commands/plan.js";
import { parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { planCredits } from "../../src/watch/credit-plan.js";
import { configFromText } from "../helpers/harness.js";

/** `schedule: head` in the config, and what `kaiawatch plan` makes of it. */
const TOKEN = "0x1111111111111111111111111111111111111111";
const WALLET = "0x2222222222222222222222222222222222222222";
const MONDAY = Date.UTC(2026, 0, 5);

const text = (schedule: string, extra = "") => `
explorer: { base_url: "http://127.0.0.1:9" }
chain: { rpc_url: "http://127.0.0.1:9", head_interval: 250ms }
status: { listen: false }
defaults: { schedule: "${schedule}" }
watches:
  - { name: token, contract: "${TOKEN}" }
  - { name: wallet, account: "${WALLET}", sources: [internal_transactions] }
${extra}
rules:
  - { name: t, watch: token, notify: [out] }
  - { name: w, watch: wallet, notify: [out] }
sinks:
  out: { type: console }
`;

describe("schedule: head", () => {
  it("is accepted, with chain.head_interval", () => {
    const config = configFromText(text("head"));
    expect(config.watches.map((w) => w.schedule)).toEqual(["head", "head"]);
    expect(config.chain.head_interval).toBe(250);
    expect(configFromText(text("*/10 * * * * *").replace(", head_interval: 250ms", "")).chain.head_interval).toBe(200);
  });

  it("costs what a schedule of every second costs at one block a second, and plan says how it ticks", () => {
    const head = planCredits(configFromText(text("head")), { dayMs: MONDAY });
    const everySecond = planCredits(configFromText(text("* * * * * *")), { dayMs: MONDAY });
    expect(head.creditsPerDay).toBe(everySecond.creditsPerDay);
    expect(head.requestsPerDay).toBe(everySecond.requestsPerDay);
    expect(head.sources.map((s) => s.ticksPerDay)).toEqual([86_400, 86_400]);
    const out = formatPlan(head, configFromText(text("head")), "config.yaml");
    expect(out).toContain("schedule head: a source ticks when the head passes its cursor, read every 250 ms");
    expect(out).toContain("345,600 reads a day");
    expect(formatPlan(everySecond, configFromText(text("* * * * * *")), "config.yaml")).not.toContain("schedule head");
  });

  it("is pointed to by plan for a schedule of every second, which it costs the same as, and not for slower ones", () => {
    const hint = (schedule: string) => formatPlan(planCredits(configFromText(text(schedule)), { dayMs: MONDAY }), configFromText(text(schedule)), "config.yaml").split("\n").find((line) => line.startsWith("every second:"));
    expect(hint("* * * * * *")).toMatch(/^every second: .+ on a one-second clock; "schedule: head" costs the same credits at one block a second and delivers within about 250 ms of the block/);
    expect(hint("*/1 * * * * *")).toBeDefined();
    expect(hint("*/2 * * * * *")).toBeUndefined();
    expect(hint("head")).toBeUndefined();
  });

  it("is refused for a balance watch, its own or from defaults", () => {
    const problems = (yaml: string) => {
      try {
        parseConfigText(yaml, { fileName: "c.yaml", env: {}, checks: CONFIG_CHECKS });
        return "";
      } catch (error) {
        return String((error as { format?: () => string }).format?.() ?? error);
      }
    };
    const own = problems(text("*/10 * * * * *", `  - { name: funds, balance: ["${WALLET}"], schedule: head }`).replace("rules:\n", `rules:\n  - { name: low, watch: funds, when: { kaia: { lt: "1 KAIA" } }, notify: [out] }\n`));
    expect(own).toContain('a balance watch reads balances on a clock schedule, not "head"');
    const inherited = problems(text("head", `  - { name: funds, balance: ["${WALLET}"] }`).replace("rules:\n", `rules:\n  - { name: low, watch: funds, when: { kaia: { lt: "1 KAIA" } }, notify: [out] }\n`));
    expect(inherited).toContain("defaults.schedule is head: give this watch a schedule of its own");
  });
});
