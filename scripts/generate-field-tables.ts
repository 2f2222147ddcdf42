/**
 * Writes the field table of each record family into docs/rules.md, between its markers, from
 * the family definitions (src/families/). `npm run docs:fields`; a test fails when the
 * committed tables differ from a fresh rendering.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withFieldTables } from "../src/families/field-tables.js";

const target = new URL("../docs/rules.md", import.meta.url);
writeFileSync(target, withFieldTables(readFileSync(target, "utf8")));
console.log(`wrote ${target.pathname}`);
