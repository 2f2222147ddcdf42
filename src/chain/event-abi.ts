import { decodeAbiValue } from "./method-abi.js";
import { canonicalSignature, eventTopic, splitTypeList } from "./signatures.js";

/** An event decoded from a log: its name and arguments, as the explorer's `type` and `items`. */
export interface DecodedEvent {
  name: string;
  items: { name: string; value: string }[];
}

export interface EventDecoder {
  decode(log: { topics: readonly string[]; data: string }): DecodedEvent | undefined;
}

/** An event as a signature declares it. */
interface EventSpec {
  name: string;
  topic0: string;
  types: string[];
  names: string[];
  /** Which parameters are indexed; undefined for a bare signature (no `indexed` written): the log's topic count decides. */
  indexed: boolean[] | undefined;
}

/**
 * The events the explorer decodes by its own table (klaytn/finder-api KipType: KIP-7, KIP-17,
 * KIP-37 and a few common ones), with its parameter names, so that a log decoded here has the
 * explorer's `type` and `items`. KIP-7/ERC-20 and KIP-17/ERC-721 share Transfer's and
 * Approval's topic0 and differ in how many parameters are indexed: the log's topic count
 * tells them apart, as it does for the explorer.
 */
const BUILT_IN = [
  "Transfer(address indexed from, address indexed to, uint256 value)",
  "Approval(address indexed owner, address indexed spender, uint256 value)",
  "Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)",
  "ApprovalForAll(address indexed owner, address indexed operator, bool approved)",
  "TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 tokenId, uint256 value)",
  "TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] tokenIds, uint256[] values)",
  "URI(string value, uint256 indexed tokenId)",
  "Paused(address account)",
  "Unpaused(address account)",
  "Upgraded(address indexed implementation)",
  "OwnershipTransferred(address indexed previousOwner, address indexed newOwner)",
];

const QUALIFIERS = new Set(["memory", "calldata", "storage", "payable"]);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The event of a signature as a user writes it. `indexed` and names are read from the text
 * when its parameters are simple (no tuples); an unnamed parameter is named by its type
 * ("address", "uint256"), as the explorer names the parameters of an event it decodes by a
 * signature without names.
 */
function eventSpec(text: string): EventSpec {
  const signature = canonicalSignature(text);
  const open = signature.indexOf("(");
  const inner = signature.slice(open + 1, -1);
  const types = inner === "" ? [] : (splitTypeList(inner) as string[]);
  const names = [...types];
  let indexed: boolean[] | undefined;
  const written = /\((.*)\)\s*$/s.exec(text)?.[1];
  if (written !== undefined && !written.includes("(")) {
    const parts = written.trim() === "" ? [] : written.split(",");
    if (parts.length === types.length) {
      const flags = parts.map((part, i) => {
        const words = part.trim().split(/\s+/).slice(1).filter((w) => !QUALIFIERS.has(w));
        const isIndexed = words.includes("indexed");
        const name = words.filter((w) => w !== "indexed").at(-1);
        if (name !== undefined && IDENTIFIER.test(name)) names[i] = name;
        return isIndexed;
      });
      if (flags.some(Boolean)) indexed = flags;
    }
  }
  return { name: signature.slice(0, open), topic0: eventTopic(signature), types, names, indexed };
}

const WORD = /^0x[0-9a-fA-F]{64}$/;
const BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;
const MAX_ARRAY = 1024;

/** An indexed value: a static type decodes from its topic; a dynamic one is stored as its hash, the topic itself. */
function topicValue(type: string, topic: string): string | undefined {
  if (!WORD.test(topic)) return undefined;
  const word = topic.slice(2).toLowerCase();
  if (type === "string" || type === "bytes" || type.endsWith("]") || type.startsWith("(")) return `0x${word}`;
  return decodeAbiValue(type, word, word);
}

/** A dynamic array of an elementary static type (uint256[] of TransferBatch), as the explorer lists it: "[1, 2, 3]". */
function arrayValue(type: string, word: string, data: string): string | undefined {
  const element = /^([a-z0-9]+)\[\]$/.exec(type)?.[1];
  if (element === undefined || element === "string" || element === "bytes") return undefined;
  const offset = Number(BigInt(`0x${word}`));
  if (!Number.isSafeInteger(offset) || offset % 32 !== 0 || data.length < (offset + 32) * 2) return undefined;
  const length = Number(BigInt(`0x${data.slice(offset * 2, offset * 2 + 64)}`));
  if (!Number.isSafeInteger(length) || length > MAX_ARRAY || data.length < (offset + 32 + 32 * length) * 2) return undefined;
  const values: string[] = [];
  for (let i = 0; i < length; i++) {
    const start = (offset + 32 + 32 * i) * 2;
    const value = decodeAbiValue(element, data.slice(start, start + 64), data);
    if (value === undefined) return undefined;
    values.push(value);
  }
  return `[${values.join(", ")}]`;
}

function decodeWith(spec: EventSpec, topics: readonly string[], data: string): DecodedEvent | undefined {
  const indexedCount = topics.length - 1;
  // A bare signature: its leading parameters are the indexed ones, as many as the log has topics after topic0.
  const indexed = spec.indexed ?? spec.types.map((_, i) => i < indexedCount);
  if (indexed.filter(Boolean).length !== indexedCount) return undefined;
  if (!BYTES.test(data)) return undefined;
  const body = data.slice(2).toLowerCase();
  // The explorer lists the indexed values first, then the data's, each in declaration order.
  const fromTopics: { name: string; value: string }[] = [];
  const fromData: { name: string; value: string }[] = [];
  let topic = 1;
  let head = 0;
  for (const [i, type] of spec.types.entries()) {
    let value: string | undefined;
    if (indexed[i]) value = topicValue(type, topics[topic++] as string);
    else {
      if (body.length < (head + 1) * 64) return undefined;
      const word = body.slice(head * 64, (head + 1) * 64);
      head++;
      value = type.endsWith("[]") ? arrayValue(type, word, body) : decodeAbiValue(type, word, body);
    }
    if (value === undefined) return undefined;
    (indexed[i] ? fromTopics : fromData).push({ name: spec.names[i] as string, value });
  }
  return { name: spec.name, items: [...fromTopics, ...fromData] };
}

/**
 * Decodes logs as the explorer does: first by its own table of standard events (always
 * included, and first, as the explorer tries it first: a standard Transfer has the explorer's
 * names whatever a watch's signature calls them), then by the watch's event signatures. A
 * signature without `indexed` (bare, `Transfer(address,address,uint256)`, or with names only)
 * takes its leading parameters as indexed, as many as the log has topics after topic0: the
 * explorer's rule for a signature from its database. A log nothing decodes (another topic0,
 * a topic count no signature of that topic0 fits, data that does not decode) is undefined:
 * the caller keeps its raw topics and data.
 */
export function createEventDecoder(signatures: readonly string[]): EventDecoder {
  const byTopic = new Map<string, EventSpec[]>();
  // A spec that decodes as an earlier one does is left out: it could never decode a log the
  // earlier one did not, and 10,000 watches of one event would otherwise try it 10,000 times.
  const seen = new Set<string>();
  for (const text of new Set([...BUILT_IN, ...signatures])) {
    const spec = eventSpec(text);
    const same = JSON.stringify([spec.topic0, spec.names, spec.indexed]);
    if (seen.has(same)) continue;
    seen.add(same);
    const list = byTopic.get(spec.topic0) ?? [];
    list.push(spec);
    byTopic.set(spec.topic0, list);
  }
  return {
    decode(log) {
      const topic0 = log.topics[0]?.toLowerCase();
      if (topic0 === undefined) return undefined;
      for (const spec of byTopic.get(topic0) ?? []) {
        const decoded = decodeWith(spec, log.topics, log.data);
        if (decoded !== undefined) return decoded;
      }
      return undefined;
    },
  };
}
