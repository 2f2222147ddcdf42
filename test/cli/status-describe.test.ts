import { describe as suite, expect, it } from "vitest";
import { describe, type StatusBody } from "../../src/cli/commands/status.js";

/** `kaiawatch status` prints what /status says of balance watches: holder, last reading, rules firing. */
suite("kaiawatch status's text", () => {
  const body: StatusBody = {
    ready: true,
    reasons: [],
    uptime_seconds: 60,
    head: { block: 1000 },
    health: { worst: "ok", conditions: [] },
    sources: [],
    sinks: {},
    balance_watches: [
      { watch: "hot-wallet", holder: "r2", last_read: { block: 990, at: "2026-01-05T00:00:50.000Z" }, rules: [{ rule: "low-kaia", state: "firing" }, { rule: "low-usdt", state: "ok" }] },
      { watch: "cold", holder: null, last_read: null, rules: [{ rule: "cold-low", state: "ok" }] },
    ],
    replica: "r1",
    replicas: [{ id: "r1" }, { id: "r2" }],
    credits: { day: "2026-01-05", spent_today: 10, budget: null, remaining_today: null, paused_until: null },
    now: "2026-01-05T00:01:00.000Z",
  };

  it("lists each balance watch with its holder, its last reading and the rules firing", () => {
    const text = describe({ url: "http://127.0.0.1:9464", ready: true, status: body });
    expect(text).toMatch(/^ {2}BALANCE WATCH\s+HOLDER\s+LAST READ\s+RULES FIRING$/m);
    expect(text).toMatch(/^ {2}hot-wallet\s+r2\s+block 990, 10s ago\s+low-kaia$/m);
    expect(text).toMatch(/^ {2}cold\s+none\s+never\s+none$/m);
  });

  it("prints no balance table when the daemon has no balance watch", () => {
    expect(describe({ url: "u", ready: true, status: { ...body, balance_watches: [] } })).not.toContain("BALANCE WATCH");
  });
});
