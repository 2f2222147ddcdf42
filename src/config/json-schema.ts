import { z } from "zod";
import { configSchema } from "./schema.js";

/**
 * The JSON Schema of config.yaml for editors (yaml-language-server), generated from the
 * same zod schema that validates, describing what may be written (defaults optional).
 */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
}

/** The committed file's exact text: stable key order, two-space indent, final newline. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
