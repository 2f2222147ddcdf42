import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { sanitizeText } from "../../src/common/sanitize-text.js";
import { escapeDiscord, escapeHtml, escapeSlack, escapeTelegramHtml, sanitizeHeader, truncate, truncateUnits } from "../../src/notify/escape.js";
import { HOSTILE, INVISIBLE_OR_BIDI, LONE_SURROGATE } from "./fixtures.js";

// Strings built from hostile pieces, any code point, and any UTF-16 unit (lone surrogates included).
const piece = fc.oneof(
  fc.constantFrom(...Object.values(HOSTILE).map((s) => s.slice(0, 200)), "<", ">", "&", "&amp;", "<script", "\u202E", "\u2066", "\u200B", "\uFEFF", "\r\n", "\r", "\u0000", "\u001B[2J", "\u0085", "\uD83D", "\uDE00", "😀", "@everyone", "\\", "*_~`"),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
);
const hostileString = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(""));
const runs = { numRuns: 500 };

describe("escapers (properties)", () => {
  it("Slack: no raw < or > survives, and every & starts an entity", () => {
    fc.assert(fc.property(hostileString, (s) => {
      const out = escapeSlack(s);
      expect(out).not.toMatch(/[<>]/);
      expect(out.replace(/&(amp|lt|gt);/g, "")).not.toContain("&");
    }), runs);
  });

  it("HTML (email) and Telegram: no tag can open, no attribute can close", () => {
    fc.assert(fc.property(hostileString, (s) => {
      for (const out of [escapeHtml(s), escapeTelegramHtml(s)]) {
        expect(out).not.toContain("<");
        expect(out.toLowerCase()).not.toContain("<script");
        expect(out).not.toContain('"');
      }
      expect(escapeHtml(s)).not.toContain("'");
    }), runs);
  });

  it("Discord: every markdown or mention character is backslash-escaped", () => {
    fc.assert(fc.property(hostileString, (s) => {
      const out = escapeDiscord(s);
      // Remove escaped pairs; what is left must hold no special character at all.
      const rest = out.replace(/\\[\\*_~`|>[\]()<#+.@-]/g, "");
      expect(rest).not.toMatch(/[\\*_~`|>[\]()<@]/);
      expect(rest).not.toMatch(/^[ \t]*([#+-]|\d+\.)/m);
    }), runs);
  });

  it("no bidi, zero-width or control character and no lone surrogate survives any escaper", () => {
    fc.assert(fc.property(hostileString, (s) => {
      for (const out of [sanitizeText(s), escapeSlack(s), escapeDiscord(s), escapeTelegramHtml(s), escapeHtml(s), sanitizeHeader(s)]) {
        expect(out).not.toMatch(INVISIBLE_OR_BIDI);
        expect(out).not.toMatch(LONE_SURROGATE);
        // eslint-disable-next-line no-control-regex
        expect(out).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/);
      }
    }), runs);
  });

  it("headers and single-line text hold no CR or LF", () => {
    fc.assert(fc.property(hostileString, (s) => {
      expect(sanitizeHeader(s)).not.toMatch(/[\r\n]/);
      expect(sanitizeText(s, { singleLine: true })).not.toMatch(/[\r\n\u2028\u2029]/);
      expect([...sanitizeHeader(s, 50)].length).toBeLessThanOrEqual(50);
    }), runs);
  });

  it("truncate: never more code points than asked, never a lone surrogate, untouched when short", () => {
    fc.assert(fc.property(hostileString, fc.integer({ min: 0, max: 60 }), (s, max) => {
      const out = truncate(s, max);
      expect([...out].length).toBeLessThanOrEqual(max);
      if (!LONE_SURROGATE.test(s)) expect(out).not.toMatch(LONE_SURROGATE);
      if ([...s].length <= max) expect(out).toBe(s);
      else expect(out.endsWith("…") || max === 0).toBe(true);
    }), runs);
  });

  it("truncateUnits: never longer than asked, never splits a pair, never cuts an entity", () => {
    fc.assert(fc.property(hostileString, fc.integer({ min: 0, max: 60 }), (s, max) => {
      const clean = escapeSlack(s);
      const out = truncateUnits(clean, max);
      expect(out.length).toBeLessThanOrEqual(max);
      expect(out).not.toMatch(LONE_SURROGATE);
      expect(out.replace(/&(amp|lt|gt);/g, "")).not.toContain("&");
    }), runs);
  });
});

describe("escapers (examples)", () => {
  it("make bidi controls visible and drop zero-width characters", () => {
    expect(sanitizeText(HOSTILE.bidi)).toBe("invoice<U+202E>gpj.exe");
    expect(sanitizeText(HOSTILE.zeroWidth)).toBe("USDT");
    expect(sanitizeText("a\u001B[2Jb")).toBe("a<U+001B>[2Jb");
    expect(sanitizeText("one\r\ntwo\rthree")).toBe("one\ntwo\nthree");
    expect(sanitizeText("one\r\ntwo\tthree", { singleLine: true })).toBe("one two three");
  });

  it("defuse Slack mentions and spoofed links", () => {
    expect(escapeSlack(HOSTILE.slackMention)).toBe("&lt;!channel&gt; &lt;!here&gt; &lt;@U024BE7LH&gt;");
    expect(escapeSlack(HOSTILE.slackLink)).toBe("&lt;http://evil.example/|https://kaiascan.io/safe&gt;");
  });

  it("defuse Discord mentions and masked links", () => {
    expect(escapeDiscord("@everyone [x](http://e)")).toBe("\\@everyone \\[x\\]\\(http://e\\)");
    expect(escapeDiscord("# big\n- item\n 2. x a-b #c")).toBe("\\# big\n\\- item\n 2\\. x a-b #c");
  });

  it("escape HTML fully", () => {
    expect(escapeHtml(HOSTILE.script)).toBe("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(escapeHtml(`"x' onload='y`)).toBe("&quot;x&#39; onload=&#39;y");
  });

  it("truncate emoji by code points", () => {
    expect(truncate("😀😀😀😀", 3)).toBe("😀😀…");
    expect(truncateUnits("ab😀c", 4)).toBe("ab…");
  });
});
