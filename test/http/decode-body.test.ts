import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBody } from "../../src/http/request.js";

/** `bytes` cut into chunks at the given places, as a socket may deliver them. */
function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to > from) chunks.push(Buffer.from(bytes.subarray(from, to)));
    from = Math.max(from, to);
  }
  return chunks;
}

/** Text of ASCII and of characters of two, three and four UTF-8 bytes. */
const pieces = fc.array(fc.constantFrom("a", "{", '"', "\\", "é", "✓", "한", "😀"), { maxLength: 100 }).map((parts) => parts.join(""));

describe("decodeBody", () => {
  it("reads any body as UTF-8 does, however it is cut into chunks (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), pieces), fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
        const bytes = Buffer.from(text, "utf8");
        expect(decodeBody(chunked(bytes, cuts), bytes.length)).toBe(bytes.toString("utf8"));
      }),
    );
  });

  it("decodes bytes that are not ASCII as UTF-8, a character cut across two chunks included", () => {
    const bytes = Buffer.from('{"name":"Kaia ✓ 한국어","v":"\u00e9"}', "utf8");
    const cut = bytes.indexOf(0xe2) + 1;
    expect(decodeBody([bytes.subarray(0, cut), bytes.subarray(cut)], bytes.length)).toBe('{"name":"Kaia ✓ 한국어","v":"é"}');
    // A byte that is not UTF-8 reads as U+FFFD, as Buffer#toString("utf8") reads it (latin1 would not).
    expect(decodeBody([Buffer.from([0x41]), Buffer.from([0xff, 0x42])], 3)).toBe("A\ufffdB");
  });

  it("keeps no byte of an earlier, longer body in a later one", () => {
    const long = Buffer.from("x".repeat(100_000));
    expect(decodeBody([long.subarray(0, 50_000), long.subarray(50_000)], long.length)).toBe("x".repeat(100_000));
    expect(decodeBody([Buffer.from("ab"), Buffer.from("c")], 3)).toBe("abc");
    expect(decodeBody([], 0)).toBe("");
  });

  it("joins a body larger than the kept buffer in one of its own", () => {
    const big = Buffer.alloc(4 * 1024 * 1024 + 1, 0x61);
    const text = decodeBody([big.subarray(0, 1), big.subarray(1)], big.length);
    expect(text.length).toBe(big.length);
    expect(text === "a".repeat(big.length)).toBe(true);
  });

  it("follows an ASCII body of 256 KiB up to 1 MiB with spaces, which JSON.parse reads as the body", () => {
    const record = '{"a":"x","n":"12"}';
    // About 266 KB and 760 KB (padded), then 1.08 MB (already an external string: as it came).
    for (const [count, padded] of [[14_000, true], [40_000, true], [57_000, false]] as const) {
      const body = Buffer.from(`{"results":[${Array.from({ length: count }, () => record).join(",")}]}`);
      const text = decodeBody(chunked(body, [1, 65_536, 200_000]), body.length);
      expect(text.length > body.length).toBe(padded);
      expect(text.startsWith(body.toString("latin1"))).toBe(true);
      expect(text.slice(body.length).trim()).toBe("");
      expect(JSON.parse(text)).toEqual(JSON.parse(body.toString()));
    }
    // Then a short one: none of the padding or of the longer body is left in it.
    expect(decodeBody([Buffer.from("[1]")], 3)).toBe("[1]");
    // Not ASCII: decoded as UTF-8 and not padded.
    const wide = Buffer.from(`["${"é".repeat(200_000)}"]`);
    expect(decodeBody([wide], wide.length)).toBe(wide.toString("utf8"));
  });
});
