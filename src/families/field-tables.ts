import type { AnyFamily } from "./define-family.js";
import { familyDefinitions } from "./registry.js";

/*
 * docs/rules.md's field tables, written from the definitions (`npm run docs:fields`): each
 * between a marker naming its family and the end marker. The headings and notes around them
 * stay hand-written; a test fails when a table differs from a fresh rendering.
 */
const START = (family: string) => `<!-- field table: ${family} (generated from src/families/ by npm run docs:fields) -->`;
const END = "<!-- end of field table -->";

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** One family's table: every field a rule may name (a token watch's fields marked as theirs by their doc), its kind, what it is and an example. */
export function fieldTableOf(definition: AnyFamily): string {
  const fields = { ...definition.fields, ...definition.tokenTransferFields };
  const rows = Object.entries(fields).map(([name, field]) => `| \`${name}\` | ${field.kind} | ${cell(field.doc)} | \`${cell(field.example)}\` |`);
  return ["| field | kind | what it is | example |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** The document with each family's table between its markers rendered afresh; throws when a family's markers are missing. */
export function withFieldTables(doc: string, definitions: readonly AnyFamily[] = familyDefinitions()): string {
  let out = doc;
  for (const definition of definitions) {
    const start = out.indexOf(START(definition.name));
    const end = start === -1 ? -1 : out.indexOf(END, start);
    if (end === -1) throw new Error(`no markers for the field table of ${definition.name}: add ${START(definition.name)} and ${END}`);
    out = `${out.slice(0, start)}${START(definition.name)}\n${fieldTableOf(definition)}\n${out.slice(end)}`;
  }
  return out;
}
