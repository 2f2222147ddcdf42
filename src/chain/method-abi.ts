import { canonicalSignature, functionSelector, splitTypeList } from "./signatures.js";

/** A function a watch names by its signature: its selector, name and parameters. */
export interface MethodSpec {
  selector: string;
  name: string;
  /** Canonical: withdraw(uint256). */
  signature: string;
  types: string[];
  /** From the signature as written ("transfer(address to, uint256 amount)"), else arg0, arg1, … */
  names: string[];
}

/**
 * The function of a signature as a user writes it, with or without parameter names. The
 * canonical form (and so the selector) is signatures.ts's; the names are read from the
 * text only when the parameters are simple (no tuples), else they are arg0, arg1, ….
 */
export function methodSpec(text: string): MethodSpec {
  const signature = canonicalSignature(text);
  const open = signature.indexOf("(");
  const name = signature.slice(0, open);
  const inner = signature.slice(open + 1, -1);
  // A canonical signature's parentheses always pair.
  const types = inner === "" ? [] : (splitTypeList(inner) as string[]);
  let names = types.map((_, i) => `arg${i}`);
  const written = /\((.*)\)\s*$/s.exec(text)?.[1];
  if (written !== undefined && !written.includes("(")) {
    const parts = written.trim() === "" ? [] : written.split(",");
    if (parts.length === types.length) {
      names = parts.map((part, i) => {
        const words = part.trim().split(/\s+/).filter((w) => !["indexed", "memory", "calldata", "storage", "payable"].includes(w));
        return words.length >= 2 && /^[A-Za-z_$][\w$]*$/.test(words[words.length - 1] as string) ? (words[words.length - 1] as string) : `arg${i}`;
      });
    }
  }
  return { selector: functionSelector(text), name, signature, types, names };
}

const MAX_DYNAMIC_BYTES = 4096;

/**
 * The arguments of a call's input by the method's types, as text: integers in decimal,
 * addresses lowercase, bool true/false, bytesN and bytes as 0x-hex, string as UTF-8.
 * Undefined when the input does not decode (too short, an offset outside it, a dirty
 * padding) or a type is one this decoder leaves alone (arrays, tuples, fixed): a method
 * named by its selector still matches, without arguments. The input is a stranger's.
 */
export function decodeArguments(spec: MethodSpec, input: string): Array<{ name: string; type: string; value: string }> | undefined {
  const data = input.slice(10);
  if (data.length % 2 !== 0) return undefined;
  const word = (i: number): string | undefined => (data.length >= (i + 1) * 64 ? data.slice(i * 64, (i + 1) * 64) : undefined);
  const out: Array<{ name: string; type: string; value: string }> = [];
  for (const [i, type] of spec.types.entries()) {
    const w = word(i);
    if (w === undefined) return undefined;
    const value = decodeAbiValue(type, w, data);
    if (value === undefined) return undefined;
    out.push({ name: spec.names[i] as string, type, value });
  }
  return out;
}

/**
 * One value of ABI-encoded data by its type: `w` is its head word (hex, no 0x), `data` the
 * whole encoding it sits in (a dynamic value's offset counts from its start). Undefined when
 * it does not decode or the type is not an elementary one.
 */
export function decodeAbiValue(type: string, w: string, data: string): string | undefined {
  const n = BigInt(`0x${w}`);
  if (type === "address") return /^0{24}/.test(w) ? `0x${w.slice(24)}` : undefined;
  if (type === "bool") return n === 0n ? "false" : n === 1n ? "true" : undefined;
  let m = /^uint(\d+)$/.exec(type);
  if (m) return n < 1n << BigInt(m[1] as string) ? n.toString() : undefined;
  m = /^int(\d+)$/.exec(type);
  if (m) {
    const bits = BigInt(m[1] as string);
    const signed = n >= 1n << 255n ? n - (1n << 256n) : n;
    return signed >= -(1n << (bits - 1n)) && signed < 1n << (bits - 1n) ? signed.toString() : undefined;
  }
  m = /^bytes(\d+)$/.exec(type);
  if (m) return `0x${w.slice(0, Number(m[1]) * 2)}`;
  if (type === "bytes" || type === "string") {
    const offset = Number(n);
    if (!Number.isSafeInteger(offset) || offset % 32 !== 0 || data.length < (offset + 32) * 2) return undefined;
    const length = Number(BigInt(`0x${data.slice(offset * 2, offset * 2 + 64)}`));
    if (!Number.isSafeInteger(length) || length > MAX_DYNAMIC_BYTES || data.length < (offset + 32 + length) * 2) return undefined;
    const hex = data.slice(offset * 2 + 64, offset * 2 + 64 + length * 2);
    return type === "bytes" ? `0x${hex}` : Buffer.from(hex, "hex").toString("utf8");
  }
  return undefined;
}
