import { afterAll, afterEach, beforeAll } from "vitest";
import { createTestCommon, type Common } from "../../../src/common/common.js";
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from "../../../src/store/postgres/postgres-store.js";
import { createTestDatabase, startPostgres, type TestPostgres } from "../../helpers/postgres.js";

/**
 * One real server per test file, one database per test: `usePostgres()` in a describe's
 * scope gives `database()` (a fresh URL) and `open()` (a store on it, closed after the test).
 */
export function usePostgres() {
  let server: TestPostgres | undefined;
  const open: PostgresStore[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close().catch(() => undefined);
  });
  afterAll(async () => {
    await server?.dispose();
  });
  return {
    server: (): TestPostgres => {
      if (server === undefined) throw new Error("the server has not started");
      return server;
    },
    database: (): Promise<string> => createTestDatabase(server!.url),
    open: async (url: string, options: Partial<PostgresStoreOptions> = {}, common: Common = createTestCommon()): Promise<PostgresStore> => {
      const store = await createPostgresStore(common, { url, replicaId: "r1", ...options });
      open.push(store);
      return store;
    },
  };
}

/** A clock the test moves by hand: lease expiry without waiting. */
export function fakeClock(start = Date.UTC(2025, 0, 1)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}
