/**
 * Rules by name, as the dispatcher's stages read them: only looked up, so that a daemon of
 * 100,000 rules can make each one when asked from its config (daemon/dispatcher-rules.ts) instead
 * of keeping an object and a map entry per rule. A ReadonlyMap is one.
 */
export interface RuleLookup<R> {
  get(name: string): R | undefined;
}
