import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileCondition } from "../../src/rules/compile-condition.js";
import { evaluateCondition } from "../../src/rules/evaluate-condition.js";
import type { RecordFamily } from "../../src/model/record.js";
import { RECORDS, condition, contextOf } from "./condition-arbitraries.js";

/**
 * The compiled closures must mean exactly what the plain interpreter means, on any record
 * and any condition (see condition-arbitraries.ts for the values drawn).
 */

describe("compiled conditions agree with the reference evaluator", () => {
  it.each<RecordFamily>(["event_logs", "nft_transfers", "internal_transactions", "transactions"])("on random %s records and conditions", (family) => {
    const context = contextOf(family);
    let matched = 0;
    let total = 0;
    fc.assert(
      fc.property(condition(family), fc.array(RECORDS[family], { minLength: 1, maxLength: 8 }), (when, records) => {
        const compiled = compileCondition(when, context);
        if (!compiled.ok) throw new Error(`generated an invalid condition: ${JSON.stringify(compiled.issues)}`);
        for (const record of records) {
          const reference = evaluateCondition(when, record, context).passed;
          expect(compiled.test(record, context.watchedAccounts)).toBe(reference);
          total += 1;
          if (reference) matched += 1;
        }
      }),
      { numRuns: 1500 },
    );
    // Both outcomes must be common, or the property would prove little.
    expect(matched / total).toBeGreaterThan(0.1);
    expect(matched / total).toBeLessThan(0.9);
  });
});
