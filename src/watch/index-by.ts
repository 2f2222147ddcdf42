/**
 * What a shared node source's filter implies of a watch's records, for the rule index (see
 * NodeShare.indexedBy): the contract they are emitted by, or the party they are from or to,
 * which is one address, or a list watch's addresses. Kept as the place and the value and
 * written as a `when` only when the index is built: a daemon keeps one per watch, and the
 * written form is a few objects (and a padded topic) each.
 */
export interface IndexedBy {
  /** contract: the record's contract; party: its from or to; topic party: a log's topics[1] or topics[2] (a Transfer's from or to). */
  place: "contract" | "party" | "topic party";
  value: string | readonly string[];
}

/** An address as a topic: 32 bytes, left-padded with zeros, lowercase. */
export const addressTopic = (address: string): string => `0x${"0".repeat(24)}${address.slice(2).toLowerCase()}`;

/** The `when` that IndexedBy says, in its family's fields. */
export function indexWhen({ place, value }: IndexedBy): Record<string, unknown> {
  const is = typeof value === "string" ? value : { in: value };
  switch (place) {
    case "contract":
      return { contract: is };
    case "party":
      return { any: [{ from: is }, { to: is }] };
    case "topic party": {
      // One address written as its topic: the index then keeps one string for both places, not a padded copy each.
      const topic = typeof value === "string" ? addressTopic(value) : is;
      return { any: [{ "topics[1]": topic }, { "topics[2]": topic }] };
    }
  }
}
