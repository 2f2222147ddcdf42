import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonErrorPosition } from "../../src/store/json-error-position.js";

/** V8's own position, when its message names one. */
function v8Position(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    const match = /at position (\d+)/.exec((error as Error).message);
    return match === null ? undefined : Number(match[1]);
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe("jsonErrorPosition", () => {
  it("finds no error in valid JSON, pretty or not", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        expect(jsonErrorPosition(JSON.stringify(value, null, pretty ? 2 : undefined))).toBeUndefined();
      }),
    );
  });

  it("finds an error exactly when JSON.parse fails, at V8's position when V8 names one", () => {
    // Damage valid JSON: cut it, or replace one character with a JSON-significant one.
    const damaged = fc
      .tuple(fc.jsonValue(), fc.boolean(), fc.nat(), fc.constantFrom("", ",", "}", "]", "{", '"', ":", "x", "\n", "\\", "-", "."))
      .map(([value, pretty, at, ch]) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const i = at % (text.length + 1);
        return ch === "" ? text.slice(0, i) : text.slice(0, i) + ch + text.slice(i + 1);
      });
    fc.assert(
      fc.property(damaged, (text) => {
        const position = jsonErrorPosition(text);
        expect(position === undefined).toBe(parses(text));
        const v8 = v8Position(text);
        if (v8 !== undefined) expect(position?.offset).toBe(v8);
        if (position !== undefined) expect(position.offset).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts lines and columns from 1", () => {
    expect(jsonErrorPosition('{\n  "a": 1,\n  "b": x\n}')).toEqual({ offset: 19, line: 3, column: 8 });
    expect(jsonErrorPosition("")).toEqual({ offset: 0, line: 1, column: 1 });
  });

  it("copes with a deeply nested corrupt file without overflowing the stack", () => {
    expect(jsonErrorPosition("[".repeat(200_000))?.offset).toBe(200_000);
  });
});
