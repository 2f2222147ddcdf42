import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, startPostgres, type TestPostgres } from "../../helpers/postgres.js";

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as unknown[];
  } finally {
    await client.end();
  }
}

describe("the PostgreSQL test harness", () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server.dispose();
  });

  it("serves a real server on 127.0.0.1, and fresh databases that do not share tables", async () => {
    const a = await createTestDatabase(server.url);
    const b = await createTestDatabase(server.url);
    await query(a, "CREATE TABLE t (x int)");
    await expect(query(b, "SELECT * FROM t")).rejects.toThrow(/does not exist/);
    expect(await query(a, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("stops, restarts and survives a SIGKILL with its data", async () => {
    const url = await createTestDatabase(server.url);
    await query(url, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)");
    await server.stop();
    await expect(query(url, "SELECT 1")).rejects.toThrow();
    await server.restart();
    expect(await query(url, "SELECT x FROM kept")).toEqual([{ x: 7 }]);
    await server.kill();
    await server.restart();
    expect(await query(url, "SELECT x FROM kept")).toEqual([{ x: 7 }]);
  });
});
