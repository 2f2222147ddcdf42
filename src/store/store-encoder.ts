import type { OutboxEntry, StoreData } from "./types.js";

const COMMA = Buffer.from(",");

/**
 * Serializes the store for each write, reusing the encoded bytes of every outbox entry that
 * has not changed since the last write. Most writes change a cursor and a few entries, while
 * the outbox can hold 10,000 alerts: re-stringifying all of them each time would dominate
 * the write. The output is the same JSON that JSON.stringify(data) would give.
 * The store must call `changed(entry)` before it mutates an entry in place.
 */
export class StoreEncoder {
  private readonly cache = new WeakMap<OutboxEntry, Buffer>();

  changed(entry: OutboxEntry): void {
    this.cache.delete(entry);
  }

  encode(data: StoreData): Buffer {
    const parts: Buffer[] = [
      Buffer.from(`{"schema_version":${JSON.stringify(data.schema_version)},"cursors":${JSON.stringify(data.cursors)},"outbox":[`),
    ];
    data.outbox.forEach((entry, index) => {
      if (index > 0) parts.push(COMMA);
      let bytes = this.cache.get(entry);
      if (bytes === undefined) {
        bytes = Buffer.from(JSON.stringify(entry), "utf8");
        this.cache.set(entry, bytes);
      }
      parts.push(bytes);
    });
    parts.push(Buffer.from(`],"meta":${JSON.stringify(data.meta)}}`));
    return Buffer.concat(parts);
  }
}
