/**
 * Writes schema/kaiawatch.schema.json from the zod schema that validates config.yaml, so
 * editors (yaml-language-server) and kaiawatch agree. `npm run schema`; a test fails when
 * the committed file differs from a fresh generation.
 */
import { writeFileSync } from "node:fs";
import { configJsonSchemaText } from "../src/config/json-schema.js";

const target = new URL("../schema/kaiawatch.schema.json", import.meta.url);
writeFileSync(target, configJsonSchemaText());
console.log(`wrote ${target.pathname}`);
