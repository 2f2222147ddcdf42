import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/index.js";
import { ConfigError } from "../../src/config/errors.js";
import type { AlertDocument } from "../../src/model/alert-document.js";
import { DIGEST_SHOWN, digestHeadline } from "../../src/notify/alert-view.js";
import { SOURCE_HEALTH_ORDER } from "../../src/watch/source-health.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { runCli } from "../helpers/run-cli.js";

/**
 * Sentences of docs/ that said something the program does not do (issue 41), each held to
 * what the code says or prints, so that the two cannot part again.
 */

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), "utf8").replace(/\s+/g, " ");

/** The bullet of a page that starts with `start`, up to the next bullet or heading (whitespace folded). */
function bullet(page: string, start: string): string {
  const at = page.indexOf(start);
  if (at === -1) throw new Error(`no "${start}" in the page`);
  const end = page.slice(at + start.length).search(/ - \*\*| #+ /);
  return page.slice(at, end === -1 ? undefined : at + start.length + end);
}

const MINIMAL = `watches:\n  - { name: w, collection: "0x1111111111111111111111111111111111111111" }\nsinks:\n  out: { type: console }\n`;

describe("docs/ say what the program does", () => {
  it("operations-cli.md: the STATE column's states, and the `, running` kaiawatch status adds during a tick", () => {
    const text = bullet(doc("operations-cli.md"), "- `STATE` is");
    expect([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((word) => SOURCE_HEALTH_ORDER.includes(word as never))).toEqual([...SOURCE_HEALTH_ORDER]);
    // test/cli/status-command.test.ts reads `ok` or `ok, running` from a live daemon.
    expect(text).toContain("followed by `, running` while a tick of it is under way");
  });

  it("sinks.md: a mint of 500 NFTs makes 500 / max digests, each listing the first DIGEST_SHOWN", () => {
    const { config } = parseConfigText(`${MINIMAL}rules:\n  - { name: mints, watch: w, notify: [out], group: { window: 30s } }\n`);
    const max = config.rules[0]!.group!.max;
    const text = bullet(doc("sinks.md"), "- **Digests.**");
    expect(text).toContain(`a mint of 500 NFTs becomes ${Math.ceil(500 / max)} Slack messages of ${max} (the default \`max\`)`);
    const contract = "0xe2e532d715ea746dbb4eb6ce3255f35147191364";
    const alerts = Array.from({ length: max }, () => ({ source: "nft_transfers", watch: "w", record: { contract: { contract_address: contract } } }) as unknown as AlertDocument);
    const headline = digestHeadline({ id: "g", rule: "mints", alerts, attempt: 1 }, DIGEST_SHOWN);
    expect(text).toContain(`lists the first ${DIGEST_SHOWN} (\`${headline.replace(contract, "0x…")}\`)`);
  });

  it("rules.md: an amount without a unit is refused with the rewrite the page shows, one too precise for a YAML number with a hint to quote it", () => {
    expect(doc("rules.md")).toContain("A number without a unit (`1500`, `\"1000\"`) is refused");
    expect(doc("rules.md")).toContain('`amount: 1000 has no unit: write "1000 KAIA" (what a number without a unit meant until now), "1000 gkei", or "1000 kei" …`');
    const rule = (amount: string) => `${MINIMAL.replace("collection:", "sources: [internal_transactions], account:")}rules:\n  - { name: r, watch: w, notify: [out], when: { amount: { gte: ${amount} } } }\n`;
    const refusal = (amount: string): string => {
      try {
        parseConfigText(rule(amount), { checks: CONFIG_CHECKS });
      } catch (error) {
        if (error instanceof ConfigError) return error.format();
        throw error;
      }
      throw new Error(`${amount} was accepted`);
    };
    expect(() => parseConfigText(rule('"0.1 KAIA"'), { checks: CONFIG_CHECKS })).not.toThrow();
    expect(refusal("1000")).toContain('amount.gte: rule "r", when.amount.gte: amount: 1000 has no unit: write "1000 KAIA" (what a number without a unit meant until now), "1000 gkei", or "1000 kei"');
    expect(refusal('"0.1"')).toMatch(/amount\.gte: .*0\.1 has no unit: write "0\.1 KAIA"/);
    expect(refusal("0.1234567890123456")).toMatch(/amount\.gte: .*quoted text/);
  });


  it("configuration.md: a YAML syntax error's report is what the loader prints", () => {
    const text = `watches:\n  - { name: w, contract: "0x0000000000000000000000000000000000000001" }\nrules:\n  - { name: r, watch: w, notify: [ops-webhook] }\nsinks:\n  ops-webhook:\n    type: webhook\n     url: http://127.0.0.1:9/webhook\n    secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n`;
    let printed = "";
    try {
      parseConfigText(text);
    } catch (error) {
      printed = `${(error as ConfigError).message}:\n${(error as ConfigError).format()}`;
    }
    const page = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    const shown = /^ {2}```\n((?: {2}config\.yaml: 1 error[\s\S]*?))\n {2}```$/m.exec(page)?.[1]?.replace(/^ {2}/gm, "");
    expect(shown).toBe(printed);
  });

  it("history --help names every hold that makes an attempt suppressed, inhibition too (docs/history.md does)", async () => {
    const help = (await runCli("history", "--help")).out.replace(/\s+/g, " ");
    expect(help).toContain("suppressed, held back by a silence, an inhibit rule or a cooldown");
    expect(doc("history.md")).toContain("held back by a silence, an inhibit rule or a cooldown");
  });
});
