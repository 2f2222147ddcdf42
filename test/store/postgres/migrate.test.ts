import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { createSilentLogger } from "../../../src/common/logger.js";
import { migrate } from "../../../src/store/postgres/migrate.js";
import { MIGRATIONS, POSTGRES_SCHEMA_VERSION, type Migration } from "../../../src/store/postgres/schema.js";
import { usePostgres } from "./pg-fixtures.js";

const server = usePostgres();
let url: string;
beforeEach(async () => {
  url = await server.database();
});

async function withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const versions = (client: pg.Client) => client.query<{ version: number }>("SELECT version FROM kaiawatch_schema ORDER BY version").then((r) => r.rows.map((row) => row.version));

describe("PostgreSQL migrations", () => {
  it("create the schema once; running them again changes nothing", async () => {
    const logger = createSilentLogger();
    await withClient(async (client) => {
      expect(await migrate(client, logger)).toEqual({ from: 0, to: POSTGRES_SCHEMA_VERSION });
      expect(await migrate(client, logger)).toEqual({ from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION });
      expect(await versions(client)).toEqual(MIGRATIONS.map((m) => m.version));
      const tables = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
      expect(tables.rows.map((row) => row.table_name)).toEqual(["absences", "alerts", "balance_episodes", "cooldowns", "cursors", "delivery_attempts", "kaiawatch_schema", "leases", "meta", "outbox", "replicas", "silences", "suppressed", "witnesses"]);
    });
  });

  it("upgrade a database of version 2 to label silences and muted alerts, keeping its silences", async () => {
    const logger = createSilentLogger();
    await withClient(async (client) => {
      expect(await migrate(client, logger, MIGRATIONS.filter((m) => m.version === 2))).toEqual({ from: 0, to: 2 });
      await client.query("INSERT INTO silences (id, rule, match, reason, created_at, expires_at, expires_ms) VALUES ('sil_old', 'outflow', '{}'::jsonb, 'kept', 'a', 'b', 1)");
      expect(await migrate(client, logger)).toEqual({ from: 2, to: POSTGRES_SCHEMA_VERSION });
      expect((await client.query("SELECT id, rule, matchers FROM silences")).rows).toEqual([{ id: "sil_old", rule: "outflow", matchers: null }]);
      await client.query(`INSERT INTO silences (id, rule, match, matchers, reason, created_at, expires_at, expires_ms) VALUES ('sil_label', NULL, '{}'::jsonb, '["severity=\\"warning\\""]'::jsonb, 'labels', 'a', 'b', 1)`);
      const check = await client.query<{ def: string }>("SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'suppressed_reason_check'");
      expect(check.rows[0]?.def).toContain("muted");
    });
  });

  it("upgrade a database of version 3 with the witnesses' table", async () => {
    const logger = createSilentLogger();
    await withClient(async (client) => {
      expect(await migrate(client, logger, MIGRATIONS.filter((m) => m.version <= 3))).toEqual({ from: 0, to: 3 });
      expect((await client.query("SELECT to_regclass('witnesses') AS t")).rows).toEqual([{ t: null }]);
      expect(await migrate(client, logger)).toEqual({ from: 3, to: POSTGRES_SCHEMA_VERSION });
      await client.query("INSERT INTO witnesses (alert_id, role, watch, family, rule, block, record_key, summary, seen_at) VALUES ('a1', 'node', 'w', 'event_logs', 'r', 10, 'k', 's', 'a')");
      await expect(client.query("INSERT INTO witnesses (alert_id, role, watch, family, rule, block, record_key, summary, seen_at) VALUES ('a1', 'oracle', 'w', 'event_logs', 'r', 10, 'k', 's', 'a')")).rejects.toThrow(/witnesses_role_check/);
    });
  });

  it("are safe when several replicas start together: one migrates, the others wait and find nothing to do", async () => {
    const logger = createSilentLogger();
    const results = await Promise.all(Array.from({ length: 5 }, () => withClient((client) => migrate(client, logger))));
    expect(results.filter((r) => r.from === 0)).toHaveLength(1);
    expect(results.every((r) => r.to === POSTGRES_SCHEMA_VERSION)).toBe(true);
    await withClient(async (client) => expect(await versions(client)).toEqual(MIGRATIONS.map((m) => m.version)));
  });

  it("apply each migration in its own transaction: a failing one leaves the database at the version before it", async () => {
    const logger = createSilentLogger();
    const broken: Migration[] = [...MIGRATIONS, { version: 99, description: "broken", sql: "CREATE TABLE half (x int); SELECT no_such_function();" }];
    await withClient(async (client) => {
      await expect(migrate(client, logger, broken)).rejects.toThrow(/no_such_function/);
      expect(await versions(client)).toEqual(MIGRATIONS.map((m) => m.version));
      const half = await client.query("SELECT to_regclass('half') AS t");
      expect(half.rows[0]).toEqual({ t: null });
    });
  });

  it("refuse a database of a development build below the first version (no upgrade exists before a release)", async () => {
    const logger = createSilentLogger();
    await withClient(async (client) => {
      await client.query("CREATE TABLE kaiawatch_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(), description text NOT NULL)");
      await client.query("INSERT INTO kaiawatch_schema (version, description) VALUES (1, 'development')");
      await expect(migrate(client, logger)).rejects.toMatchObject({ code: "KW_STORE_VERSION", message: expect.stringMatching(/schema version 1, written by a development build/) });
      expect(await versions(client)).toEqual([1]);
    });
  });

  it("refuse a database newer than this code", async () => {
    const logger = createSilentLogger();
    const newer: Migration[] = [...MIGRATIONS, { version: 99, description: "future", sql: "CREATE TABLE future (x int)" }];
    await withClient(async (client) => {
      await migrate(client, logger, newer);
      await expect(migrate(client, logger)).rejects.toMatchObject({ code: "KW_STORE_VERSION" });
    });
  });
});
