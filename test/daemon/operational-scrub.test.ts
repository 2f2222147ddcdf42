import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOperationalMonitor, OPERATIONAL_EPISODES } from "../../src/daemon/operational-monitor.js";
import { readMeta, writeMeta } from "../../src/store/meta-slot.js";
import { openStore } from "../../src/store/open-store.js";
import { quietCommon, tempDir } from "../helpers/harness.js";

/**
 * Issue 41, secrets: the operational monitor is the one door to the episodes it stores and the
 * alerts it queues, so it scrubs what comes in by value: each condition, and each episode it
 * reads (a release before this one stored them as they came, and the restart queues their
 * firing alerts again and, when they clear, their resolved alerts).
 */
const KEY = "q_7-Zx";
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the operational monitor scrubs by value", () => {
  it("conditions as they come in, and episodes an earlier release stored as they came", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const common = quietCommon();
    common.secrets.add(KEY);
    const store = await openStore(common, { path: join(dir.path, "store.json") });
    cleanups.push(() => store.close());
    const since = new Date(common.now()).toISOString();
    await writeMeta(store, OPERATIONAL_EPISODES, { head_unreachable: { id: "kw_old", key: "head_unreachable", kind: "head_unreachable", since, summary: `the chain head was unreachable: The url(/v2/${KEY}) does not exists.`, detail: { error: `The url(/v2/${KEY}) does not exists.` } } });

    const monitor = await createOperationalMonitor(common, { store, sinks: ["ops"], network: "mainnet", head: () => 1000, onQueued: () => {} });
    await monitor.update([{ key: "source_failing:src_1", kind: "source_failing", summary: `source w (src_1) is failing: Invalid token: Bearer ${KEY}`, detail: { source: "src_1", error: `Invalid token: Bearer ${KEY}` } }]);

    const queued = JSON.stringify((await store.listOutbox({ sink: "ops" })).map((entry) => entry.alert));
    const stored = JSON.stringify(await readMeta(store, OPERATIONAL_EPISODES));
    for (const text of [queued, stored, JSON.stringify(monitor.active())]) {
      expect(text).toContain("Invalid token: Bearer [redacted]");
      expect(text).not.toContain(KEY);
    }
    // The episode of the earlier release cleared: its resolved alert is queued scrubbed too.
    expect(queued).toContain("kw_old:resolved");
    expect(queued).toContain("The url(/v2/[redacted]) does not exists.");
  });
});
