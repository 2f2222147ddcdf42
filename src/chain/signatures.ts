import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { KaiawatchError } from "../common/errors.js";

export class SignatureError extends KaiawatchError {
  override name = "SignatureError";
  constructor(message: string) {
    super("KW_CHAIN_SIGNATURE", message);
  }
}

const TOPIC_HASH = /^0x[0-9a-fA-F]{64}$/;
const SELECTOR = /^0x[0-9a-fA-F]{8}$/;

/** A 0x-prefixed 32-byte hex hash (an event topic, a transaction hash), any letter case. */
export function isTopicHash(text: unknown): text is string {
  return typeof text === "string" && TOPIC_HASH.test(text);
}

/** A 0x-prefixed 4-byte function selector, any letter case. */
export function isSelector(text: unknown): text is string {
  return typeof text === "string" && SELECTOR.test(text);
}

/**
 * The canonical form the hash is taken over: `Transfer(address,address,uint256)`.
 * Accepts what people paste: surrounding whitespace, a leading `event`/`function`
 * keyword, parameter names, `indexed` and data locations, and the aliases `uint`, `int`,
 * `byte`, `fixed`, `ufixed` (which the canonical form spells out, as Solidity does when
 * it hashes). Anything else is refused, because a wrong canonical form hashes to a topic
 * that silently never matches.
 */
export function canonicalSignature(text: string): string {
  return new SignatureParser(text).parse();
}

/** topic0 of an event: keccak-256 of its canonical signature, 0x-prefixed lowercase hex. */
export function eventTopic(signature: string): string {
  return `0x${bytesToHex(keccak_256(utf8ToBytes(canonicalSignature(signature))))}`;
}

/** The 4-byte selector of a function: the first bytes of keccak-256 of its canonical signature. */
export function functionSelector(signature: string): string {
  return eventTopic(signature).slice(0, 10);
}

/** True when the text reads as `Name(types…)` rather than as a hash. */
export function looksLikeSignature(text: string): boolean {
  return /^\s*[A-Za-z_$][\w$\s]*\(/.test(text);
}

/**
 * A type list ("address,(uint256,bytes)[],bool") split at its top-level commas, each tuple
 * kept whole; undefined when its parentheses do not pair.
 */
export function splitTypeList(list: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) return undefined;
  }
  if (depth !== 0) return undefined;
  parts.push(list.slice(start));
  return parts;
}

const ELEMENTARY = /^(address|bool|string|bytes([1-9]|[12][0-9]|3[0-2])?|u?int(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?|u?fixed([0-9]+x[0-9]+)?|function|byte)$/;
const QUALIFIERS = new Set(["indexed", "memory", "calldata", "storage", "payable"]);

class SignatureParser {
  private i = 0;
  constructor(private readonly text: string) {}

  parse(): string {
    this.ws();
    let name = this.identifier();
    if (name === "event" || name === "function") {
      this.ws();
      if (this.peek() !== "(") name = this.identifier();
    }
    if (!name) this.fail("a name first, e.g. Transfer(address,address,uint256)");
    this.ws();
    const params = this.list();
    this.ws();
    if (this.i < this.text.length) this.fail("nothing after the closing parenthesis");
    return `${name}(${params.join(",")})`;
  }

  private list(): string[] {
    this.expect("(");
    const types: string[] = [];
    this.ws();
    if (this.peek() === ")") {
      this.i++;
      return types;
    }
    for (;;) {
      types.push(this.param());
      this.ws();
      const c = this.peek();
      this.i++;
      if (c === ")") return types;
      if (c !== ",") this.fail(c === undefined ? "a closing parenthesis" : `"," or ")" instead of "${c}"`, this.i - 1);
    }
  }

  private param(): string {
    this.ws();
    const type = this.type();
    // Qualifiers and a parameter name may follow; the canonical form drops them.
    let named = false;
    for (;;) {
      this.ws();
      const start = this.i;
      const word = this.identifier();
      if (!word) return type;
      if (named) this.fail(`"," or ")"`, start);
      if (!QUALIFIERS.has(word)) named = true;
    }
  }

  private type(): string {
    let base: string;
    if (this.peek() === "(") {
      base = `(${this.list().join(",")})`;
    } else {
      const start = this.i;
      const word = this.identifier();
      if (!word) this.fail("a type such as address or uint256", start);
      if (!ELEMENTARY.test(word)) this.fail(`a known type instead of "${word}"`, start);
      base = canonicalElementary(word);
    }
    for (;;) {
      this.ws();
      if (this.peek() !== "[") return base;
      this.i++;
      const start = this.i;
      while (/[0-9]/.test(this.peek() ?? "")) this.i++;
      const size = this.text.slice(start, this.i);
      if (size.startsWith("0")) this.fail("an array size of at least 1", start);
      this.expect("]");
      base += `[${size}]`;
    }
  }

  private identifier(): string {
    const m = /^[A-Za-z_$][\w$]*/.exec(this.text.slice(this.i));
    if (!m) return "";
    this.i += m[0].length;
    return m[0];
  }

  private ws(): void {
    while (/\s/.test(this.peek() ?? "")) this.i++;
  }

  private peek(): string | undefined {
    return this.text[this.i];
  }

  private expect(c: string): void {
    this.ws();
    if (this.peek() !== c) this.fail(`"${c}"`);
    this.i++;
  }

  private fail(wanted: string, at = this.i): never {
    throw new SignatureError(`bad signature ${JSON.stringify(this.text)}: expected ${wanted} at character ${at + 1}`);
  }
}

function canonicalElementary(word: string): string {
  if (word === "uint" || word === "int") return `${word}256`;
  if (word === "byte") return "bytes1";
  if (word === "fixed" || word === "ufixed") return `${word}128x18`;
  return word;
}
