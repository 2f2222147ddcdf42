import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { layers } from "./layers.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const srcRoot = join(repoRoot, "src");
const rank = new Map(layers.map((layer, index) => [layer.folder, index]));

interface ImportEdge {
  /** Path of the importing file, relative to the repository root. */
  readonly file: string;
  readonly specifier: string;
  readonly fromFolder: string;
  /** The src folder the import lands in; undefined for packages and node built-ins. */
  readonly toFolder: string | undefined;
}

function sourceFiles(): string[] {
  return readdirSync(srcRoot, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts"))
    .map((path) => join(srcRoot, path))
    .sort();
}

function folderOf(absolutePath: string): string | undefined {
  const inSrc = relative(srcRoot, absolutePath);
  if (inSrc.startsWith("..")) return undefined;
  const parts = inSrc.split(sep);
  // A file directly in src/ has no folder; the folder test below reports it.
  return parts.length > 1 ? parts[0] : "";
}

/**
 * Every module specifier a file names: static imports and re-exports (type-only ones too,
 * since a type import still ties the layers together for a reader), `import x = require()`,
 * dynamic `import("…")` and `import("…").T` in type positions. Read with the TypeScript parser,
 * not a regular expression, so that strings and comments that look like imports are ignored.
 */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) found.push(argument.text);
      else found.push("<computed dynamic import>");
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function importEdges(): ImportEdge[] {
  return sourceFiles().flatMap((absolute) => {
    const fromFolder = folderOf(absolute) ?? "";
    return specifiersOf(absolute).map((specifier) => ({
      file: relative(repoRoot, absolute),
      specifier,
      fromFolder,
      toFolder: specifier.startsWith(".") ? folderOf(resolve(dirname(absolute), specifier)) : undefined,
    }));
  });
}

function describeOrder(): string {
  return layers.map((layer) => layer.folder).join(" → ");
}

describe("the layers of src/", () => {
  const edges = importEdges();

  it("declares every folder under src/ and nothing else", () => {
    const folders = readdirSync(srcRoot, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    const declared = layers.map((layer) => layer.folder).sort();
    expect(folders, "test/architecture/layers.ts must list exactly the folders of src/").toEqual(declared);
    const loose = sourceFiles().filter((file) => folderOf(file) === "").map((file) => relative(repoRoot, file));
    expect(loose, "every source file belongs to a declared folder, none sits directly in src/").toEqual([]);
  });

  it("has no import against the declared order", () => {
    const offending = edges.filter((edge) => {
      if (edge.specifier === "<computed dynamic import>") return true;
      if (edge.toFolder === undefined) return false;
      const from = rank.get(edge.fromFolder);
      const to = rank.get(edge.toFolder);
      return from === undefined || to === undefined || to > from;
    });
    const lines = offending.map((edge) => `  ${edge.file} → ${edge.specifier}  (${edge.fromFolder} may not import ${edge.toFolder ?? "a computed path"})`);
    expect(
      lines,
      `a folder may import only itself and the folders before it: ${describeOrder()}\n${lines.join("\n")}\n`,
    ).toEqual([]);
  });

  it("has no cycle in the folder import graph", () => {
    const graph = new Map<string, Set<string>>();
    for (const edge of edges) {
      if (edge.toFolder === undefined || edge.toFolder === edge.fromFolder) continue;
      const targets = graph.get(edge.fromFolder) ?? new Set<string>();
      targets.add(edge.toFolder);
      graph.set(edge.fromFolder, targets);
    }
    // Depth-first search; a folder met again while still on the path closes a cycle.
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const walk = (folder: string, path: string[]): void => {
      if (state.get(folder) === "done") return;
      if (state.get(folder) === "visiting") {
        cycles.push([...path.slice(path.indexOf(folder)), folder].join(" → "));
        return;
      }
      state.set(folder, "visiting");
      for (const next of graph.get(folder) ?? []) walk(next, [...path, folder]);
      state.set(folder, "done");
    };
    for (const folder of graph.keys()) walk(folder, []);
    expect(cycles, `folder import cycles:\n${cycles.join("\n")}`).toEqual([]);
  });

  it("is the order the Layout section of docs/development.md shows", () => {
    const page = readFileSync(join(repoRoot, "docs/development.md"), "utf8");
    const section = /^## Layout\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(page)?.[1];
    expect(section, "docs/development.md has a '## Layout' section").toBeDefined();
    const listed = [...(section ?? "").matchAll(/^\d+\. `src\/([a-z-]+)\/`: (.+)$/gm)].map((match) => ({ folder: match[1], responsibility: match[2] }));
    expect(listed).toEqual(layers.map((layer) => ({ folder: layer.folder, responsibility: layer.responsibility })));
  });
});

/**
 * The store is a port (src/store/backend.ts): the daemon and the CLI ask the backend what it
 * can do, never which class it is. Outside src/store/ code names only the port's modules, and
 * takes values only from its entry points; nobody asks "is this PostgreSQL?".
 */
const PORT_TYPES = ["backend.ts", "types.ts", "ownership.ts", "silence-store.ts"];
const PORT_VALUES = ["open-backend.ts", "errors.ts", "resources.ts", "meta-slot.ts", "migrate-to-postgres.ts"];

interface StoreImport {
  readonly file: string;
  readonly target: string;
  readonly typeOnly: boolean;
}

function storeImportsOf(file: string): StoreImport[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: StoreImport[] = [];
  for (const node of source.statements) {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || node.moduleSpecifier === undefined || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    const specifier = node.moduleSpecifier.text;
    if (!specifier.startsWith(".")) continue;
    const target = relative(join(srcRoot, "store"), resolve(dirname(file), specifier).replace(/\.js$/, ".ts"));
    if (target.startsWith("..")) continue;
    let typeOnly: boolean;
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && named !== undefined && named.every((element) => element.isTypeOnly)));
    } else {
      typeOnly = node.isTypeOnly;
    }
    found.push({ file: relative(repoRoot, file), target, typeOnly });
  }
  return found;
}

describe("the store port", () => {
  const outside = sourceFiles().filter((file) => folderOf(file) !== "store");

  it("is all that code outside src/store/ imports of the store: the port's types, and values only from its entry points", () => {
    const offending = outside.flatMap(storeImportsOf).filter((edge) => !(PORT_VALUES.includes(edge.target) || (edge.typeOnly && PORT_TYPES.includes(edge.target))));
    const lines = offending.map((edge) => `  ${edge.file} → store/${edge.target}${edge.typeOnly ? " (types)" : ""}`);
    expect(lines, `outside src/store/ import only the port: types from ${PORT_TYPES.join(", ")}; values from ${PORT_VALUES.join(", ")}\n${lines.join("\n")}\n`).toEqual([]);
  });

  it("is never asked which class it is: no instanceof of a store class and no look at store.url outside src/store/ (src/config/ defines the key)", () => {
    const offending: string[] = [];
    for (const file of outside.filter((path) => folderOf(path) !== "config")) {
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword && /Store$/.test(node.right.getText(source))) {
          offending.push(`  ${relative(repoRoot, file)}: ${node.getText(source)}`);
        }
        if (ts.isPropertyAccessExpression(node) && node.name.text === "url" && /(^|\.)store$/i.test(node.expression.getText(source))) {
          offending.push(`  ${relative(repoRoot, file)}: ${node.getText(source)}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offending, `ask the Backend (src/store/backend.ts) what it can do instead:\n${offending.join("\n")}\n`).toEqual([]);
  });
});
