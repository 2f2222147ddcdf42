import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseMatchers } from "../../src/notify/matchers.js";
import { createSilenceBook, newSilence } from "../../src/notify/silences.js";
import { createStatusServer } from "../../src/status/status-server.js";
import { openSqliteStore } from "../../src/store/open-store.js";
import { quietCommon, tempDir } from "../helpers/harness.js";

/**
 * POST /api/silences, a running daemon's silence API: the change goes into the daemon's
 * silence book and its store, and a malformed or
 * unknown one is refused with a reason. Who may write is write-access.test.ts's business.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T0 = Date.UTC(2030, 0, 1);

describe("POST /api/silences", () => {
  it("adds and removes a silence in the daemon's book and store; refuses what is malformed or unknown", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const common = quietCommon({ now: () => T0 });
    const store = await openSqliteStore(common, { path: join(dir.path, "store.json") });
    cleanups.push(() => store.close());
    const book = await createSilenceBook(common, { silences: store.silences });
    const server = await createStatusServer(common, {
      listen: { host: "127.0.0.1", port: 0 },
      // Who may write is write-token.test.ts's subject; here, what a write does.
      trustLoopback: true,
      provider: {
        readiness: () => Promise.resolve({ ready: true, reasons: [], checks: {} }),
        status: () => Promise.resolve({}),
        async changeSilences(change) {
          if ("add" in change) {
            await book.add(change.add, T0);
            return { ok: true, silence: change.add };
          }
          const removed = await book.remove(change.remove, T0);
          return removed === undefined ? { ok: false, status: 404, error: "no such silence" } : { ok: true, silence: removed };
        },
      },
    });
    cleanups.push(() => server.close());
    const post = async (body: unknown, contentType = "application/json") => {
      const res = await fetch(`${server.url}/api/silences`, { method: "POST", headers: { "content-type": contentType }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    const silence = newSilence({ rule: "calls", match: { to: "0xAbC" }, forMs: 3_600_000, reason: "maintenance", now: T0 });
    expect(await post({ add: silence })).toEqual({ status: 200, body: { ok: true, silence } });
    expect(book.list(T0).map((s) => s.id)).toEqual([silence.id]);
    expect((await store.silences.active(T0)).map((s) => s.id)).toEqual([silence.id]);

    expect((await post({ add: { ...silence, expires_at: "never" } })).status).toBe(400);
    expect((await post({ add: silence, remove: silence.id })).status).toBe(400);
    expect((await post({ remove: "sil_nothex!" })).status).toBe(400);
    expect((await post({ add: silence }, "text/plain")).status).toBe(415);
    expect((await post({ remove: "sil_00000000" })).status).toBe(404);

    expect(await post({ remove: silence.id })).toMatchObject({ status: 200, body: { silence: { id: silence.id } } });
    expect(book.list(T0)).toEqual([]);
    expect(await store.silences.active(T0)).toEqual([]);

    // A label silence: matchers instead of (or beside) a rule, checked as the CLI checks them.
    const labels = newSilence({ match: {}, matchers: parseMatchers('{severity="warning", team=~"nft.*"}'), forMs: 3_600_000, reason: "release night", now: T0 });
    expect(await post({ add: labels })).toEqual({ status: 200, body: { ok: true, silence: labels } });
    expect(book.list(T0).map((s) => [s.id, s.rule, s.matchers])).toEqual([[labels.id, undefined, ['severity="warning"', 'team=~"nft.*"']]]);
    for (const matchers of [["severity"], ['team=~".*"'], [], "severity=warning"]) {
      expect((await post({ add: { ...labels, id: "sil_0000000a", matchers } })).status, JSON.stringify(matchers)).toBe(400);
    }
  });
});
