import { familiesEnrichedBy } from "../families/registry.js";
import { ENRICHMENT_KINDS } from "../model/enrichment.js";
import type { ConfigIssue } from "./errors.js";
import type { Config } from "./types.js";

/** A config check: every `enrich` entry fits its rule's source. */
export function checkEnrichments(config: Pick<Config, "rules">): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  config.rules.forEach((rule, index) => {
    rule.enrich.forEach((kind, position) => {
      const families: readonly string[] = familiesEnrichedBy(kind);
      if (families.includes(rule.source)) return;
      issues.push({
        path: ["rules", index, "enrich", position],
        message: `rule "${rule.name}": enrich "${kind}" applies only to ${families.join(", ")} records (${ENRICHMENT_KINDS[kind].needs}); this rule reads ${rule.source}`,
      });
    });
  });
  return issues;
}
