import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node } from "yaml";
import { ConfigError, ConfigFileError, parseConfigText } from "../../src/config/index.js";
import { CONFIG_CHECKS } from "../../src/daemon/config-checks.js";
import { EXAMPLE_ENV, EXAMPLE_TEXT } from "../helpers/example-config.js";

/**
 * The config loader on text nobody meant to write: arbitrary YAML, and config.example.yaml
 * with keys renamed, values replaced or swapped for another type, entries deleted, lines
 * cut. Whatever comes in, the loader either accepts it or throws a typed config error whose
 * every issue has a line, a column and a message — never a TypeError or a stack trace.
 */

// Bounded so the file stays a few seconds on two shared cores; a failure prints its seed to replay.
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
/**
 * The properties are CPU-bound and wait for nothing: their outcome cannot depend on time, only
 * their duration does (6 s quiet, over 30 s, the suite's default, beside two CPU hogs and a
 * loaded suite). Their timeout is only a guard against a hang, far above any loaded run.
 */
const CPU_BOUND_TIMEOUT_MS = 180_000;

type Outcome = "accepted" | "rejected";

/** Runs the loader as `run` and `validate` do; fails the property on anything but success or a typed config error. */
function load(text: string): Outcome {
  try {
    const { config } = parseConfigText(text, { fileName: "fuzz.yaml", env: EXAMPLE_ENV, checks: CONFIG_CHECKS });
    expect(Array.isArray(config.watches)).toBe(true);
    return "accepted";
  } catch (error) {
    if (error instanceof ConfigFileError) return "rejected";
    if (!(error instanceof ConfigError)) throw new Error(`the loader threw ${String(error)} (not a config error) on:\n${text}`, { cause: error });
    expect(error.code).toBe("KW_CONFIG_INVALID");
    expect(error.issues.length).toBeGreaterThan(0);
    const lines = text.split("\n").length;
    for (const issue of error.issues) {
      expect(Number.isInteger(issue.line) && issue.line >= 1 && issue.line <= lines + 1, `line of ${JSON.stringify(issue)}`).toBe(true);
      expect(Number.isInteger(issue.column) && issue.column >= 1, `column of ${JSON.stringify(issue)}`).toBe(true);
      expect(issue.message.trim()).not.toBe("");
      expect(issue.message).not.toMatch(/\n\s+at /);
    }
    return "rejected";
  }
}

// YAML's own punctuation is over-represented so that the parser's odd corners are reached.
const yamlChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(":", " ", "\n", "-", "[", "]", "{", "}", ",", "#", "&", "*", "!", "|", ">", "'", '"', "%", "@", "`", "?", "$", "\t", "<<") },
  { weight: 2, arbitrary: fc.constantFrom("watches", "rules", "sinks", "explorer", "chain", "store", "name", "account", "type", "when", "notify", "${", "}", "0x") },
  { weight: 3, arbitrary: fc.string({ maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 3 }) },
);
const yamlText = fc.array(yamlChar, { maxLength: 60 }).map((parts) => parts.join(""));

const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e21, "", "5s", "0x", "*/10 * * * * *", "${NOPE}", "latest", "webhook", "https://x.example/h"),
    fc.string({ maxLength: 12 }),
    fc.integer(),
    fc.double(),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.constantFrom("watches", "rules", "sinks", "name", "type", "when", "url", "account"), fc.string({ maxLength: 6 })), tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** Every node of the example's tree with the path to it, so that a mutation can pick any one. */
function collectNodes(doc: Document): Array<{ parent: Node; key: unknown; node: Node }> {
  const out: Array<{ parent: Node; key: unknown; node: Node }> = [];
  const walk = (node: Node) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (pair.value && (isMap(pair.value) || isSeq(pair.value) || isScalar(pair.value))) {
          out.push({ parent: node, key: isScalar(pair.key) ? pair.key.value : pair.key, node: pair.value });
          walk(pair.value);
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        if (isMap(item) || isSeq(item) || isScalar(item)) {
          out.push({ parent: node, key: index, node: item });
          walk(item);
        }
      });
    }
  };
  if (doc.contents) walk(doc.contents as Node);
  return out;
}

type Mutation =
  | { kind: "rename"; at: number; name: string }
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "delete"; at: number }
  | { kind: "swap"; at: number }
  | { kind: "cut-line"; at: number }
  | { kind: "insert-text"; at: number; text: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("rename" as const), at: fc.nat(), name: fc.oneof(fc.constantFrom("watch", "rule", "sink", "notfy", "Name", "type", "url", "when", "account"), fc.string({ minLength: 1, maxLength: 8 })) }),
  fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), value: jsonish }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("cut-line" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert-text" as const), at: fc.nat(), text: yamlText }),
);

/** A value of another type than `value`: a map for a scalar, a string for a number, and so on. */
function swapped(value: unknown): unknown {
  if (Array.isArray(value)) return value.length > 0 ? value[0] : {};
  if (value !== null && typeof value === "object") return [value];
  if (typeof value === "number") return String(value);
  if (typeof value === "boolean") return value ? "yes" : 0;
  if (typeof value === "string") return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : { value };
  return "null";
}

function mutate(text: string, mutations: Mutation[]): string {
  let current = text;
  for (const m of mutations) {
    if (m.kind === "cut-line" || m.kind === "insert-text") {
      const lines = current.split("\n");
      const at = m.at % Math.max(1, lines.length);
      if (m.kind === "cut-line") lines.splice(at, 1);
      else lines[at] = `${(lines[at] ?? "").slice(0, m.text.length % 7)}${m.text}${(lines[at] ?? "").slice(m.text.length % 7)}`;
      current = lines.join("\n");
      continue;
    }
    const doc = parseDocument(current);
    if (doc.errors.length > 0) return current; // an earlier cut broke the syntax: that is the case to test
    const nodes = collectNodes(doc);
    const target = nodes[m.at % Math.max(1, nodes.length)];
    if (!target) continue;
    const { parent, key, node } = target;
    if (m.kind === "rename" && isMap(parent)) {
      const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
      if (pair) pair.key = doc.createNode(m.name);
    } else if (m.kind === "delete") {
      if (isMap(parent)) parent.delete(key);
      else if (isSeq(parent)) parent.items.splice(key as number, 1);
    } else {
      const value = m.kind === "replace" ? m.value : swapped(node.toJSON());
      const created = doc.createNode(value);
      if (isMap(parent)) parent.set(key, created);
      else if (isSeq(parent)) parent.items[key as number] = created;
    }
    current = doc.toString();
  }
  return current;
}

describe("found by fuzzing", () => {
  it("an alias with no anchor before it is a config error at the alias, not a ReferenceError", () => {
    const text = "watches:\n  - *wallet\n";
    const error = (() => {
      try {
        parseConfigText(text, { fileName: "fuzz.yaml", env: EXAMPLE_ENV });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([expect.objectContaining({ line: 2, column: 5, message: expect.stringContaining("*wallet refers to no anchor") })]);
  });

  it("a merge key (<<) without a map is a config error at the key, not an Error", () => {
    expect(load("<<:")).toBe("rejected");
    expect(load("watches: []\n<<: 5\n")).toBe("rejected");
    try {
      parseConfigText("watches: []\nexplorer:\n  <<: [a]\n", { fileName: "fuzz.yaml", env: EXAMPLE_ENV });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).issues).toContainEqual(expect.objectContaining({ line: 3, column: 3, path: `explorer["<<"]`, message: expect.stringContaining("merge key") }));
    }
  });

  it("an alias bomb is a config error, not a ReferenceError", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(", ")}]`);
    lines.push("watches: *h");
    expect(load(lines.join("\n"))).toBe("rejected");
  });
});

describe("fuzzing the config loader", { timeout: CPU_BOUND_TIMEOUT_MS }, () => {
  it("accepts config.example.yaml as it is (the base every mutation starts from)", () => {
    expect(load(EXAMPLE_TEXT)).toBe("accepted");
  });

  it("arbitrary YAML-like text: accepted or a config error with positions, never a crash", () => {
    const seen = new Set<Outcome>();
    fc.assert(
      fc.property(yamlText, (text) => {
        seen.add(load(text));
      }),
      { numRuns: RUNS * 2 },
    );
    expect(seen.has("rejected")).toBe(true);
  });

  it("arbitrary YAML documents (any tree, stringified): accepted or a config error, never a crash", () => {
    fc.assert(
      fc.property(jsonish, (value) => {
        load(parseDocument("").createNode(value).toString());
      }),
      { numRuns: RUNS },
    );
  });

  it("config.example.yaml with keys renamed, values replaced or swapped, entries deleted, lines cut", () => {
    const outcomes = { accepted: 0, rejected: 0 };
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        outcomes[load(mutate(EXAMPLE_TEXT, mutations))] += 1;
      }),
      { numRuns: RUNS },
    );
    // Both sides are reached: mutations that the loader must refuse, and harmless ones (a renamed
    // sink, a deleted optional key) that it must still accept.
    expect(outcomes.rejected).toBeGreaterThan(0);
    expect(outcomes.accepted).toBeGreaterThan(0);
  });
});
