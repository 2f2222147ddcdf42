import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const srcRoot = join(resolve(dirname(fileURLToPath(import.meta.url)), "..", ".."), "src");

/** Every `new X(…)` of the identifiers in `names`, as file:line, read with the TypeScript parser. */
function constructions(names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const path of readdirSync(srcRoot, { recursive: true, encoding: "utf8" }).filter((p) => p.endsWith(".ts")).sort()) {
    const file = join(srcRoot, path);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && names.has(node.expression.text)) {
        found.push(`${relative(srcRoot, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} new ${node.expression.text}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Files importing a package. */
function importersOf(specifier: string): string[] {
  return readdirSync(srcRoot, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".ts"))
    .filter((p) => ts.preProcessFile(readFileSync(join(srcRoot, p), "utf8"), true, true).importedFiles.some((i) => i.fileName === specifier))
    .sort();
}

describe("schedules", () => {
  it("are compiled in one place: croner is imported by config/schedule.ts alone, and a Cron constructed once in it", () => {
    expect(importersOf("croner")).toEqual(["config/schedule.ts"]);
    expect(constructions(new Set(["Cron"]))).toEqual([expect.stringMatching(/^config\/schedule\.ts:\d+ new Cron$/)]);
  });
});
