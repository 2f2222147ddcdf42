import { readdirSync, readFileSync } from "node:fs";
import type { OperationName } from "../../src/explorer/operations.js";

const DIR = new URL("../fixtures/explorer/", import.meta.url);

/** One recorded answer of the explorer (test/fixtures/explorer/*.json, errors aside). */
export interface CorpusFixture {
  file: string;
  operation: OperationName;
  variant: string;
  source: string;
  request: Record<string, unknown>;
  unknown_fields: string[];
  /** The body's own text: the file's `body` is its last key, so that numbers keep every digit. */
  text: string;
}

function readFixture(file: string): CorpusFixture {
  const text = readFileSync(new URL(file, DIR), "utf8");
  const parsed = JSON.parse(text) as Omit<CorpusFixture, "file" | "text">;
  const start = text.indexOf('"body": ') + '"body": '.length;
  return { ...parsed, file, text: text.slice(start, text.lastIndexOf("}")).trim() };
}

/** Every answer of the corpus, by file name. */
export const CORPUS: readonly CorpusFixture[] = readdirSync(DIR)
  .filter((f) => f.endsWith(".json") && !f.startsWith("errors"))
  .sort()
  .map(readFixture);
