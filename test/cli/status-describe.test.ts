import { describe as suite, expect, it } from "vitest";
import { describe } from "../../src/cli/commands/status.js";
import { unansweredStatus } from "../../src/status/unanswered-status.js";

suite("kaiawatch status on a daemon whose store has not answered since it started", () => {
  it("prints what /status says, credits unknown, instead of failing on the missing part", () => {
    const body = unansweredStatus({ last: undefined, nowMs: 60_000, startedAtMs: 0, storeReason: "store: not answering for 5 s", head: { block: 120 }, storePath: "postgres" });
    const text = describe({ url: "http://127.0.0.1:9464", ready: false, status: body as never });
    expect(text).toContain("http://127.0.0.1:9464: NOT READY · up 1m · head 120");
    expect(text).toContain("  not ready: store: not answering for 5 s");
    expect(text).toContain("Credits: unknown (the store has not answered since the daemon started)");
  });
});
