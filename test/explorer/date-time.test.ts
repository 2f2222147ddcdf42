import { describe, expect, it } from "vitest";
import { dateTime, ShapeError } from "../../src/explorer/shape.js";

const accepted = (text: string) => {
  try {
    dateTime(text, "datetime");
    return true;
  } catch (error) {
    if (!(error instanceof ShapeError)) throw error;
    return false;
  }
};

describe("dateTime", () => {
  it("accepts exactly what Date.parse reads, around the explorer's own form", () => {
    const base = "2025-03-02T01:04:06.000Z";
    let checked = 0;
    // Every character replaced by each of these, alone and together with a second one.
    for (let i = 0; i < base.length; i++) {
      for (const c of "0159-:.TZtz +a") {
        for (let j = i; j < base.length; j += 5) {
          for (const d of "09-") {
            const once = base.slice(0, i) + c + base.slice(i + 1);
            const text = once.slice(0, j) + d + once.slice(j + 1);
            expect(accepted(text), text).toBe(!Number.isNaN(Date.parse(text)));
            checked++;
          }
        }
      }
    }
    // Every month and day number, and the hours around the end of a day (24:00:00 is Date.parse's).
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        for (const time of ["00:00:00.000", "23:59:59.999", "24:00:00.000", "24:00:01.000", "23:60:00.000", "23:59:60.000"]) {
          const text = `2024-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}T${time}Z`;
          expect(accepted(text), text).toBe(!Number.isNaN(Date.parse(text)));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });

  it("still reads the other forms Date.parse takes", () => {
    for (const text of ["2025-03-02T01:04:06Z", "2025-03-02T01:04:06.5+09:00", "2025-03-02", "Sun, 02 Mar 2025 01:04:06 GMT"]) expect(accepted(text), text).toBe(true);
    for (const text of ["", "yesterday", "2025-03-02T01:04:06.000Q"]) expect(accepted(text), text).toBe(false);
  });
});
