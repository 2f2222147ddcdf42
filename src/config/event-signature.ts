import { canonicalSignature, splitTypeList } from "../chain/signatures.js";

const TOPIC_HASH = /^0x[0-9a-fA-F]{64}$/;
const EVENT_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function isElementaryType(type: string): boolean {
  if (type === "address" || type === "bool" || type === "string" || type === "bytes" || type === "function") return true;
  let match = /^bytes([0-9]+)$/.exec(type);
  if (match) return Number(match[1]) >= 1 && Number(match[1]) <= 32 && !match[1]?.startsWith("0");
  match = /^u?int([0-9]+)$/.exec(type);
  if (match) return Number(match[1]) % 8 === 0 && Number(match[1]) >= 8 && Number(match[1]) <= 256 && !match[1]?.startsWith("0");
  match = /^u?fixed([0-9]+)x([0-9]+)$/.exec(type);
  if (match) return Number(match[1]) % 8 === 0 && Number(match[1]) >= 8 && Number(match[1]) <= 256 && Number(match[2]) <= 80;
  return false;
}

/** A canonical type list "t1,t2" (types may be tuples and arrays); false when malformed. */
function isTypeList(text: string): boolean {
  if (text === "") return true;
  return splitTypeList(text)?.every(isType) ?? false;
}

function isType(text: string): boolean {
  const arrays = /((?:\[[0-9]*\])*)$/.exec(text);
  const base = text.slice(0, text.length - (arrays?.[1]?.length ?? 0));
  if (base.startsWith("(") && base.endsWith(")")) return isTypeList(base.slice(1, -1));
  return isElementaryType(base);
}

/**
 * Why `text` is not a usable event filter, or undefined when it is: the canonical
 * signature `Name(type,type)` that kaiawatch hashes into topic0, or the 0x topic hash
 * itself. Aliases and parameter names would hash to a different topic, so they are
 * refused with a hint instead of silently matching nothing.
 */
export function eventSignatureProblem(text: string): string | undefined {
  if (text.startsWith("0x") || text.startsWith("0X")) {
    return TOPIC_HASH.test(text) ? undefined : "not a topic hash (0x followed by 64 hex digits)";
  }
  const open = text.indexOf("(");
  if (open !== -1 && !text.includes(")")) return 'not an event signature: it has no ")"; in a [ ] list, quote each signature ("Transfer(address,address,uint256)"), as commas separate items';
  if (open === -1 || !text.endsWith(")")) return 'not an event signature: write Name(type,…), e.g. "Transfer(address,address,uint256)", or a 0x topic hash';
  const name = text.slice(0, open);
  if (!EVENT_NAME.test(name)) return `not an event signature: "${name}" is not an event name`;
  const params = text.slice(open + 1, -1);
  if (/(^|[,(\s])u?int(?=[[,)\s]|$)/.test(params)) return "not an event signature: write uint256/int256, not uint/int (the hash uses the canonical type)";
  // `indexed` and parameter names are dropped from the canonical form that is hashed.
  let canonical: string;
  try {
    canonical = canonicalSignature(text);
  } catch (error) {
    // Types only: the parser's message would name a character; the type is what is wrong.
    if (!/\s/.test(params)) return "not an event signature: unknown or malformed parameter type";
    return `not an event signature: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (!isTypeList(canonical.slice(canonical.indexOf("(") + 1, -1))) return "not an event signature: unknown or malformed parameter type";
  return undefined;
}
