import { describe, expect, it } from "vitest";
import { compileTemplate, templateContext } from "../../src/notify/template.js";
import { TemplateError } from "../../src/notify/errors.js";
import { escapeHtml, escapeSlack } from "../../src/notify/escape.js";
import { HOSTILE, digest, nftAlert, single } from "./fixtures.js";

const upper = (s: string) => `[${s}]`;

describe("templates", () => {
  it("substitutes dotted paths and escapes only the values", () => {
    const t = compileTemplate("<b>{{rule}}</b> at {{ block }}: {{links.transaction}} {{record.contract.contract_address}} {{missing.path}}.");
    const alert = nftAlert();
    const out = t.render(templateContext(single(alert)), upper);
    expect(out).toBe(`<b>[${alert.rule}]</b> at [${alert.block}]: [${alert.links.transaction}] [${(alert.record as { contract: { contract_address: string } }).contract.contract_address}] [].`);
  });

  it("renders sections over arrays, truthy values and inverted sections", () => {
    const t = compileTemplate("{{#digest}}{{count}} alerts:{{#alerts}} {{block}}{{/alerts}}{{/digest}}{{^digest}}one: {{summary}}{{/digest}}{{#nothing}}X{{/nothing}}{{^alerts}}none{{/alerts}}");
    const d = digest(3);
    expect(t.render(templateContext(d), (s) => s)).toBe(`3 alerts: ${d.alerts.map((a) => a.block).join(" ")}`);
    const s = single(nftAlert({ summary: "hello" }));
    expect(t.render(templateContext(s), (x) => x)).toBe("one: hello");
    expect(compileTemplate("{{#xs}}<{{.}}>{{/xs}}").render({ xs: ["a", "b"] }, upper)).toBe("<[a]><[b]>");
    expect(compileTemplate("{{#o}}{{name}}{{/o}}").render({ o: { name: "n" } }, upper)).toBe("[n]");
  });

  it("keeps hostile on-chain values inert: escaped for the sink, cut to size", () => {
    const t = compileTemplate("Name: {{enrichment.token.name}}");
    const out = t.render(templateContext(single(nftAlert({}, `${HOSTILE.script}${HOSTILE.huge}`))), escapeHtml);
    expect(out).not.toContain("<script");
    expect(out.length).toBeLessThan(3000);
    expect(compileTemplate("{{summary}}").render({ summary: HOSTILE.slackMention }, escapeSlack)).not.toContain("<");
  });

  it("cannot reach the prototype chain", () => {
    expect(compileTemplate("{{constructor}}{{rule.constructor.name}}{{__proto__}}").render({ rule: "r" }, (s) => s)).toBe("");
  });

  it("renders objects as JSON", () => {
    expect(compileTemplate("{{o}}").render({ o: { a: 1 } }, (s) => s)).toBe('{"a":1}');
  });

  it.each([
    ["Hello {{name", "unclosed tag", 1, 7],
    ["a\nb {{#alerts}}x", "section 'alerts' is never closed", 2, 3],
    ["{{#a}}x{{/b}}", "does not close", 1, 8],
    ["x {{/a}}", "closes no open section", 1, 3],
    ["line\n  {{{raw}}}", "raw output", 2, 3],
    ["{{> partial}}", "partials", 1, 1],
    ["{{bad name}}", "invalid name", 1, 1],
    ["{{}}", "empty tag", 1, 1],
  ])("reports a syntax error with its position: %j", (source, message, line, column) => {
    let error: unknown;
    try {
      compileTemplate(source);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TemplateError);
    const te = error as TemplateError;
    expect(te.code).toBe("KW_NOTIFY_TEMPLATE");
    expect(te.message).toContain(message);
    expect([te.line, te.column]).toEqual([line, column]);
    expect(te.message).toContain(`line ${line}, column ${column}`);
  });

  it("gives digests their own variables", () => {
    const d = digest(2);
    const ctx = templateContext(d);
    expect(ctx).toMatchObject({ digest: true, id: d.id, rule: d.rule, count: 2, watch: "collection", source: "nft_transfers" });
  });
});
