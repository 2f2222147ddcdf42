/**
 * A rule's `when` is parsed and compiled once. The config checks at load are the first to
 * ask (every rule, against its source); the planner, the engine, `explain`, `replay`,
 * `validate` and the balance watches ask again with the same `when` and context and get the
 * same result back. It is kept beside the `when` value itself, which the resolved config
 * carries unchanged from the file to every consumer (and the worker-parsed config too), so
 * the compiled form travels with the config and goes when the config goes.
 *
 * `key` names what was made of it and in which context (a family, the watched account, a
 * token's decimals): the same `when` read for another token is another entry. A `when`
 * that is not an object (absent) costs nothing to read and is not kept.
 */
const made = new WeakMap<object, Map<string, unknown>>();

export function oncePerCondition<T>(when: unknown, key: string, make: () => T): T {
  if (typeof when !== "object" || when === null) return make();
  let book = made.get(when);
  if (book === undefined) {
    book = new Map();
    made.set(when, book);
  }
  if (book.has(key)) return book.get(key) as T;
  const result = make();
  book.set(key, result);
  return result;
}
