/**
 * Where the first JSON syntax error in `text` is, as offset, line and column (1-based);
 * `undefined` when the text is valid JSON. Node 20's JSON.parse names the position only for
 * some errors, and a user repairing a store file by hand needs it for every one.
 * Iterative (an explicit stack), so a deeply nested corrupt file cannot overflow the stack.
 */
export function jsonErrorPosition(text: string): { offset: number; line: number; column: number } | undefined {
  const offset = jsonErrorOffset(text);
  if (offset < 0) return undefined;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1 };
}

type State = "value" | "value_or_close" | "key_or_close" | "key" | "after";

function jsonErrorOffset(text: string): number {
  const n = text.length;
  const stack: number[] = []; // char codes of the open containers: '{' or '['
  let i = 0;
  let state: State = "value";

  const skipWhitespace = () => {
    for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  };
  const isDigit = (c: number) => c >= 48 && c <= 57;
  const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

  /** Returns the error offset, or -1 when a string was read (i is then past its quote). */
  const readString = (): number => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return -1;
      }
      if (c < 0x20) return i;
      if (c === 92) {
        const e = text.charCodeAt(i + 1);
        if (e === 117) {
          for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) return Math.min(i + k, n);
          i += 6;
        } else if ([34, 92, 47, 98, 102, 110, 114, 116].includes(e)) {
          i += 2;
        } else {
          return Math.min(i + 1, n);
        }
      } else {
        i++;
      }
    }
    return n;
  };

  const readNumber = (): number => {
    if (text.charCodeAt(i) === 45) i++;
    if (text.charCodeAt(i) === 48) i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else return i;
    if (text.charCodeAt(i) === 46) {
      i++;
      if (!isDigit(text.charCodeAt(i))) return i;
      while (isDigit(text.charCodeAt(i))) i++;
    }
    if (text.charCodeAt(i) === 101 || text.charCodeAt(i) === 69) {
      i++;
      if (text.charCodeAt(i) === 43 || text.charCodeAt(i) === 45) i++;
      if (!isDigit(text.charCodeAt(i))) return i;
      while (isDigit(text.charCodeAt(i))) i++;
    }
    return -1;
  };

  const readLiteral = (word: string): number => {
    for (let k = 0; k < word.length; k++, i++) if (text.charCodeAt(i) !== word.charCodeAt(k)) return i;
    return -1;
  };

  for (;;) {
    skipWhitespace();
    const c = text.charCodeAt(i);
    switch (state) {
      case "value_or_close":
      case "value": {
        if (state === "value_or_close" && c === 93) {
          stack.pop();
          i++;
          state = "after";
          break;
        }
        let error = -1;
        if (c === 123 || c === 91) {
          stack.push(c);
          i++;
          state = c === 123 ? "key_or_close" : "value_or_close";
          break;
        } else if (c === 34) error = readString();
        else if (c === 116) error = readLiteral("true");
        else if (c === 102) error = readLiteral("false");
        else if (c === 110) error = readLiteral("null");
        else if (c === 45 || isDigit(c)) error = readNumber();
        else return i;
        if (error >= 0) return error;
        state = "after";
        break;
      }
      case "key_or_close":
      case "key": {
        if (state === "key_or_close" && c === 125) {
          stack.pop();
          i++;
          state = "after";
          break;
        }
        if (c !== 34) return i;
        const error = readString();
        if (error >= 0) return error;
        skipWhitespace();
        if (text.charCodeAt(i) !== 58) return i;
        i++;
        state = "value";
        break;
      }
      case "after": {
        const top = stack[stack.length - 1];
        if (top === undefined) return i < n ? i : -1;
        if (c === 44) {
          i++;
          state = top === 123 ? "key" : "value";
        } else if ((top === 123 && c === 125) || (top === 91 && c === 93)) {
          stack.pop();
          i++;
        } else {
          return i;
        }
        break;
      }
    }
  }
}
