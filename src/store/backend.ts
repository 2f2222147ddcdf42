import type { Common } from "../common/common.js";
import type { Ownership } from "./ownership.js";
import type { SilenceStore } from "./silence-store.js";
import type { Store } from "./types.js";

/** One replica as its heartbeat row says (only where replicas share the store). */
export interface ReplicaRecord {
  id: string;
  startedMs: number;
  heartbeatMs: number;
  /** What it publishes with its heartbeat (held sources and sinks, its verdict of their health). */
  info: Record<string, unknown>;
  live: boolean;
}

/** The replicas sharing the store, as this one sees them. */
export interface Replicas {
  /** This replica's id (logs, metrics, the explorer request header, its meta slots). */
  readonly selfId: string;
  /** Every replica with a heartbeat row, live or not. */
  list(): Promise<ReplicaRecord[]>;
}

/** What ownership needs from the daemon (used by leased ownership; the sole one ignores it). */
export interface OwnershipOptions {
  /** What this replica publishes with its heartbeat (its held sources and sinks are added). */
  info?: () => Record<string, unknown>;
  /** Called after each renewal with what was gained and lost (the dispatcher wakes a sink it gained). */
  onChange?: (change: { gained: string[]; lost: string[] }) => void;
}

/**
 * The store as a port: what the configured backend can do, asked by the daemon and the CLI
 * instead of its class. The file store (SQLite) has one process, which owns every resource;
 * PostgreSQL is shared by replicas, which lease them (`replicas` present).
 */
export interface Backend {
  readonly store: Store;
  readonly silences: SilenceStore;
  /** Present where replicas share the store; absent with one process. */
  readonly replicas?: Replicas;
  /** Which sources and sinks this process works on: all of them, or its leases among the replicas. */
  ownership(common: Common, options: OwnershipOptions): Ownership;
  /** Closes the store (ownership is stopped by its own stop()). */
  close(): Promise<void>;
}
