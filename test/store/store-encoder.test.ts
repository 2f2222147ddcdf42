import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StoreEncoder } from "../../src/store/store-encoder.js";
import type { StoreData } from "../../src/store/types.js";
import { cursor, entry } from "./fixtures/sample.js";

const storeData = fc
  .record({
    cursors: fc.dictionary(fc.string(), fc.integer({ min: -1, max: 1e9 })),
    entries: fc.array(fc.tuple(fc.string(), fc.constantFrom("slack", "email", "hook"), fc.jsonValue()), { maxLength: 20 }),
    meta: fc.dictionary(fc.string(), fc.jsonValue()),
  })
  .map(({ cursors, entries, meta }): StoreData => ({
    schema_version: 1,
    cursors: Object.fromEntries(Object.entries(cursors).map(([key, block]) => [key, cursor(key, block)])),
    outbox: entries.map(([id, sink, record]) => ({ ...entry(id, sink), alert: { ...entry(id, sink).alert, record } })),
    meta,
  }));

describe("StoreEncoder", () => {
  it("writes exactly what JSON.stringify writes", () => {
    fc.assert(
      fc.property(storeData, (data) => {
        expect(new StoreEncoder().encode(data).toString("utf8")).toBe(JSON.stringify(data));
      }),
    );
  });

  it("re-encodes an entry reported as changed, and reuses the rest", () => {
    fc.assert(
      fc.property(storeData, fc.nat(), fc.string(), (data, pick, error) => {
        const encoder = new StoreEncoder();
        encoder.encode(data);
        const target = data.outbox[pick % Math.max(1, data.outbox.length)];
        if (target !== undefined) {
          encoder.changed(target);
          target.last_error = error;
          target.attempts++;
        }
        data.outbox.push(entry("new", "slack"));
        data.cursors.extra = cursor("extra", 5);
        expect(encoder.encode(data).toString("utf8")).toBe(JSON.stringify(data));
      }),
    );
  });
});
