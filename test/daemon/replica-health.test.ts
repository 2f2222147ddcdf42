import { describe, expect, it } from "vitest";
import type { OperationalCondition } from "../../src/daemon/operational-monitor.js";
import { createReplicaHealth, PUBLISHED_CONDITIONS_MAX, type ReplicaHeartbeat } from "../../src/daemon/replica-health.js";

/** What a replica puts in its heartbeat of its verdict, and what the sender reads of the others' (the heartbeat rows given as data). */
const failing = (source: string, error = "503"): OperationalCondition => ({ key: `source_failing:${source}`, kind: "source_failing", summary: `source ${source} is failing`, detail: { source, error } });

describe("verdicts shared in the heartbeats", () => {
  it("publishes the conditions present, the first ones in full and the rest by key, with long texts cut", async () => {
    const r2 = createReplicaHealth({ replicaId: "r2", replicas: async () => [] });
    expect(r2.info()).toEqual({});
    const sources = Array.from({ length: PUBLISHED_CONDITIONS_MAX + 3 }, (_, i) => `src_${String(i).padStart(16, "0")}`);
    r2.publish({ conditions: sources.map((source) => failing(source, "x".repeat(5000))), unsettled: [] });
    const info = r2.info();
    const health = info.health as { conditions: OperationalCondition[]; more: string[] };
    expect(health.conditions.length).toBe(PUBLISHED_CONDITIONS_MAX);
    expect(health.more).toEqual(sources.slice(PUBLISHED_CONDITIONS_MAX).map((source) => `source_failing:${source}`));
    expect(JSON.stringify(info).length).toBeLessThan(PUBLISHED_CONDITIONS_MAX * 600);

    // The sender reads them back: every condition, the ones by key with a short summary.
    const r1 = createReplicaHealth({ replicaId: "r1", replicas: async () => [{ id: "r2", live: true, info: { ...info, sources } }] });
    const others = await r1.others();
    expect(others.conditions.map((condition) => condition.key).sort()).toEqual(sources.map((source) => `source_failing:${source}`).sort());
    expect(others.conditions.at(-1)).toMatchObject({ kind: "source_failing", detail: { source: sources.at(-1), replica: "r2" } });
    expect([...others.settled].sort()).toEqual([...sources].sort());
  });

  it("reads only live replicas, only conditions of sources they list as held, and no verdict of a source not settled there", async () => {
    const rows: ReplicaHeartbeat[] = [
      { id: "r1", live: true, info: { sources: ["src_a"], health: { conditions: [failing("src_a")], unsettled: [] } } },
      { id: "r2", live: true, info: { sources: ["src_b", "src_c"], health: { conditions: [failing("src_b"), failing("src_x"), { key: "bogus", kind: "sink_stalled", summary: "", detail: {} }], unsettled: ["src_c"] } } },
      { id: "r3", live: false, info: { sources: ["src_d"], health: { conditions: [failing("src_d")], unsettled: [] } } },
      // Started, no verdict published yet: its sources have none.
      { id: "r4", live: true, info: { sources: ["src_e"] } },
    ];
    const others = await createReplicaHealth({ replicaId: "r1", replicas: async () => rows }).others();
    expect(others.conditions.map((condition) => condition.key)).toEqual(["source_failing:src_b"]);
    expect([...others.settled]).toEqual(["src_b"]);
  });
});
