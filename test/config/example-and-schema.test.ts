import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configJsonSchemaText, parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

describe("config.example.yaml", () => {
  const text = read("config.example.yaml");
  // Every ${VAR} the example references (not the documentation of the syntax in comments).
  const body = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n");
  const names = [...body.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)].map((m) => m[1] ?? "");

  it("points editors at the generated JSON Schema", () => {
    expect(text.split("\n")[0]).toBe("# yaml-language-server: $schema=./schema/kaiawatch.schema.json");
  });

  it("validates, with the checks run and once add, when the variables it references are set", () => {
    expect(names.length).toBeGreaterThanOrEqual(7);
    const env = Object.fromEntries(names.map((name) => [name, name === "WEBHOOK_SECRET" ? "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" : name.endsWith("_URL") ? `https://hooks.example/${name}` : name === "TELEGRAM_BOT_TOKEN" ? "123456:abcdef" : name === "PAGERDUTY_ROUTING_KEY" ? "0123456789abcdef0123456789abcdef" : `value-of-${name}`]));
    const { config, secrets } = parseConfigText(text, { fileName: "config.example.yaml", env, checks: CONFIG_CHECKS });
    expect(config.watches.map((w) => w.kind).sort()).toEqual(["account", "account", "accounts", "balance", "collection", "contract", "contract", "contracts", "every_block"]);
    expect(new Set(Object.values(config.sinks).map((s) => s.type))).toEqual(new Set(["slack", "discord", "telegram", "email", "webhook", "pagerduty", "teams", "console", "file", "heartbeat"]));
    expect(secrets).toContain("value-of-KAIASCAN_API_KEY");
    expect(secrets).toContain("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  });

  it("documents every key the schema knows, with a comment", () => {
    const schema = JSON.parse(read("schema/kaiawatch.schema.json")) as unknown;
    const keys = new Set<string>();
    const collect = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node !== null && typeof node === "object") {
        const record = node as Record<string, unknown>;
        const properties = record.properties;
        if (properties !== null && typeof properties === "object") Object.keys(properties).forEach((k) => keys.add(k));
        Object.values(record).forEach(collect);
      }
    };
    collect(schema);
    // Written as a key, or named in a comment (the options shared by every sink).
    const missing = [...keys].filter((key) => !new RegExp(`(^|\\s|#.*)${key}:`, "m").test(text));
    expect(missing).toEqual([]);
  });
});

describe("schema/kaiawatch.schema.json", () => {
  it("equals a fresh generation from the zod schema (run `npm run schema` after changing it)", () => {
    expect(read("schema/kaiawatch.schema.json")).toBe(configJsonSchemaText());
  });
});
