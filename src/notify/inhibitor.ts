import { activeInhibitions, type FiringSource, type InhibitRule } from "./inhibit.js";

export interface InhibitorOptions {
  rules: readonly InhibitRule[];
  /**
   * The alerts firing now, read from the store (balance episodes, kaiawatch's conditions): what
   * any replica or a restart decided, not this process's memory.
   */
  firing: (now: number) => Promise<FiringSource[]>;
}

export interface InhibitRuleStatus {
  id: string;
  source_matchers: string[];
  target_matchers: string[];
  equal: string[];
  /** Alerts this rule held back since this process started. */
  held: number;
}

export interface Inhibitor {
  readonly rules: readonly InhibitRule[];
  /** The firing sources for one admission round of the dispatcher (read from the store). */
  current(now: number): Promise<FiringSource[]>;
  /** Counts alerts held back, one per rule id given. */
  noteHeld(ruleIds: readonly string[]): void;
  /** The rules with their counts, and the sources holding now as last read (for /status). */
  status(): { rules: InhibitRuleStatus[]; active: Array<{ rule: string; source: string; labels: Record<string, string>; summary?: string }> };
}

/**
 * The dispatcher's view of `inhibit_rules:`: the rules, the sources firing as last read, and
 * how many alerts each rule held back. The sources are read at every admission round that
 * has due entries, so a source that resolved lets the next alert through at once.
 */
export function createInhibitor(options: InhibitorOptions): Inhibitor {
  let known: FiringSource[] = [];
  const held = new Map<string, number>();
  return {
    rules: options.rules,
    async current(now) {
      known = await options.firing(now);
      return known;
    },
    noteHeld(ruleIds) {
      for (const id of ruleIds) held.set(id, (held.get(id) ?? 0) + 1);
    },
    status() {
      return {
        rules: options.rules.map((rule) => ({
          id: rule.id,
          source_matchers: rule.sourceMatchers.map(String),
          target_matchers: rule.targetMatchers.map(String),
          equal: [...rule.equal],
          held: held.get(rule.id) ?? 0,
        })),
        active: activeInhibitions(options.rules, known).map(({ rule, source }) => ({ rule, source: source.id, labels: { ...source.labels }, ...(source.summary === undefined ? {} : { summary: source.summary }) })),
      };
    },
  };
}
