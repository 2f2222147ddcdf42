import { SOURCE_CONDITION_KINDS, sourceOfCondition } from "./operational-checks.js";
import type { OperationalCondition } from "./operational-monitor.js";

/**
 * A heartbeat carries at most this many source conditions in full; any more go by key alone
 * (the operational holder still opens and keeps their episodes, with a shorter summary). A
 * heartbeat is written every third of a lease: with thousands of sources failing at once
 * (the explorer down), the full text of each would make it megabytes.
 */
export const PUBLISHED_CONDITIONS_MAX = 200;
/** A published summary or detail string is cut to this many characters (an error text can be long). */
const PUBLISHED_TEXT_MAX = 300;

/** What one replica judges of the sources it holds now. */
export interface SourceVerdict {
  /** The source conditions holding now (SOURCE_CONDITION_KINDS), of sources this replica holds. */
  conditions: OperationalCondition[];
  /**
   * Sources it holds that it has no verdict of yet: no successful tick since it took them,
   * and neither failing nor stalled here (just taken over, or retrying its first ticks).
   */
  unsettled: string[];
}

/** What the other live replicas judge, as the operational holder reads it. */
export interface OthersVerdict {
  /** Their source conditions, each of a source the replica that publishes it holds. */
  conditions: OperationalCondition[];
  /** The sources a live replica holds and has a verdict of: a condition of one that is not among `conditions` has cleared. */
  settled: ReadonlySet<string>;
}

/** How a health monitor shares its verdict with the other replicas (health-monitor.ts, option `shared`). */
export interface SharedHealth {
  /** Keeps this replica's latest verdict for its next heartbeat. */
  publish(verdict: SourceVerdict): void;
  /** The other live replicas' verdicts, from their last heartbeats. */
  others(): Promise<OthersVerdict>;
}

/** One replica's heartbeat row (Leases.replicas()). */
export interface ReplicaHeartbeat {
  id: string;
  live: boolean;
  info: Record<string, unknown>;
}

export interface ReplicaHealthOptions {
  replicaId: string;
  /** Every replica's heartbeat (Leases.replicas): `info.sources` lists the sources it holds, `info.health` its verdict. */
  replicas: () => Promise<ReplicaHeartbeat[]>;
}

export interface ReplicaHealth extends SharedHealth {
  /** What this replica adds to its heartbeat (the lease keeper's `info`): its latest verdict, bounded. */
  info(): Record<string, unknown>;
}

/**
 * The channel through which replicas tell the operational holder what they judge of the
 * sources they hold: the heartbeat each one writes every third of a lease anyway (the
 * `replicas` table's `info`), so no table and no transaction is added. Only conditions that
 * hold are published, plus the sources still without a verdict (usually none; all of a
 * replica's sources right after it starts or takes them over).
 */
export function createReplicaHealth(options: ReplicaHealthOptions): ReplicaHealth {
  let published: Record<string, unknown> | undefined;
  return {
    publish(verdict) {
      published = {
        conditions: verdict.conditions.slice(0, PUBLISHED_CONDITIONS_MAX).map(bounded),
        more: verdict.conditions.slice(PUBLISHED_CONDITIONS_MAX).map((condition) => condition.key),
        unsettled: verdict.unsettled,
      };
    },
    info: () => (published === undefined ? {} : { health: published }),
    async others() {
      const conditions: OperationalCondition[] = [];
      const settled = new Set<string>();
      for (const replica of await options.replicas()) {
        if (replica.id === options.replicaId || !replica.live) continue;
        // The sources listed in the same heartbeat: a verdict is taken only of what its replica held when it wrote it.
        const held = new Set(strings(replica.info.sources));
        const health = replica.info.health;
        // No verdict yet (a replica that has just started): its sources have none.
        if (!isRecord(health)) continue;
        const unsettled = new Set(strings(health.unsettled));
        for (const key of held) if (!unsettled.has(key)) settled.add(key);
        const seen = Array.isArray(health.conditions) ? health.conditions.filter(isCondition) : [];
        for (const condition of seen) {
          const source = sourceOfCondition(condition);
          if (source !== undefined && held.has(source)) conditions.push({ ...condition, detail: { ...condition.detail, replica: replica.id } });
        }
        for (const key of strings(health.more)) {
          const kind = [...SOURCE_CONDITION_KINDS].find((candidate) => key.startsWith(`${candidate}:`));
          const source = kind === undefined ? undefined : sourceOfCondition({ key, kind });
          if (kind === undefined || source === undefined || !held.has(source)) continue;
          conditions.push({ key, kind, summary: `${kind.replaceAll("_", " ")}: source ${source} (judged by replica ${replica.id}; its /status has the detail)`, detail: { source, replica: replica.id } });
        }
      }
      return { conditions, settled };
    },
  };
}

function bounded(condition: OperationalCondition): OperationalCondition {
  const cut = (value: unknown): unknown => (typeof value === "string" && value.length > PUBLISHED_TEXT_MAX ? `${value.slice(0, PUBLISHED_TEXT_MAX)}…` : value);
  return { key: condition.key, kind: condition.kind, summary: cut(condition.summary) as string, detail: Object.fromEntries(Object.entries(condition.detail).map(([name, value]) => [name, cut(value)])) };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The strings of a list in a heartbeat (JSON another replica wrote): anything else is dropped. */
export const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []);

function isCondition(value: unknown): value is OperationalCondition {
  return isRecord(value) && typeof value.key === "string" && typeof value.kind === "string" && SOURCE_CONDITION_KINDS.has(value.kind) && typeof value.summary === "string" && isRecord(value.detail);
}
