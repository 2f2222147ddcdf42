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

/** The `when` that IndexedBy says, in its family's fields. */
export function indexWhen({ place, value }: IndexedBy): Record<string, unknown> {
  const is = typeof value === "string" ? value : { in: value };
  switch (place) {
    case "contract":
      return { contract: is };
    case "party":
      return { any: [{ from: is }, { to: is }] };
    case "topic party":
      return { any: [{ "topics[1]": is }, { "topics[2]": is }] };
  }
}
