import { ENRICHMENT_KINDS, type Enrichment } from "../model/enrichment.js";
import type { RecordFamily } from "../model/record.js";
import type { AnyFamily, ExplorerSourceOperation, NodeSourceOperation, SingleFamilyWatchKind } from "./define-family.js";
import { eventLogs } from "./event-logs.js";
import { internalTransactions } from "./internal-transactions.js";
import { nftTransfers } from "./nft-transfers.js";
import { transactions } from "./transactions.js";

/** Every record family, one line each, in the order documentation and messages list them. */
const DEFINITIONS: readonly AnyFamily[] = [eventLogs, nftTransfers, internalTransactions, transactions];

const byName = new Map<string, AnyFamily>(DEFINITIONS.map((definition) => [definition.name, definition]));

/** The definitions registered, in registry order. */
export function familyDefinitions(): readonly AnyFamily[] {
  return [...byName.values()];
}

/** The definition of a family; throws on a name no definition has (a bug: names are checked at config load). */
export function familyOf(name: RecordFamily): AnyFamily {
  const definition = byName.get(name);
  if (definition === undefined) throw new Error(`no record family "${name}"`);
  return definition;
}

/** True when a definition of this name is registered. */
export function isFamilyName(name: string): name is RecordFamily {
  return byName.has(name);
}

/** The families an account watch may list in `sources`, in registry order (the config schema's enum). */
export function accountSources(): RecordFamily[] {
  return familyDefinitions()
    .filter((d) => d.watchedBy.account === "source" || d.watchedBy.account === "default source")
    .map((d) => d.name);
}

/** The sources of an account watch that names none and no tokens. */
export function defaultAccountSources(): RecordFamily[] {
  return familyDefinitions()
    .filter((d) => d.watchedBy.account === "default source")
    .map((d) => d.name);
}

/** The family an account watch's `tokens` produce (the tokens' Transfer logs, read with its token transfer fields). */
export function tokenTransferFamily(): AnyFamily {
  const definition = familyDefinitions().find((d) => d.watchedBy.account === "tokens");
  if (definition?.tokenTransferFields === undefined) throw new Error("no record family is produced by an account watch's tokens with token transfer fields");
  return definition;
}

/** The families every rule of a watch of this kind reads. */
export function familiesOfWatchKind(kind: SingleFamilyWatchKind): RecordFamily[] {
  return familyDefinitions()
    .filter((d) => d.watchedBy.kinds.includes(kind))
    .map((d) => d.name);
}

/** The families whose records an enrichment applies to: every family for a per-transaction lookup, else those that name it. */
export function familiesEnrichedBy(kind: Enrichment): RecordFamily[] {
  const spec: { of: "transaction" | "record" } = ENRICHMENT_KINDS[kind];
  return familyDefinitions()
    .filter((d) => spec.of === "transaction" || (d.enrichments as readonly Enrichment[] | undefined)?.includes(kind) === true)
    .map((d) => d.name);
}

/** The family of a source operation (each operation yields the records of one family). */
export function familyOfOperation(operation: ExplorerSourceOperation | NodeSourceOperation): RecordFamily {
  for (const definition of byName.values()) {
    if ((definition.readers.explorer as readonly string[]).includes(operation) || (definition.readers.node as readonly string[]).includes(operation)) return definition.name;
  }
  throw new Error(`no record family is read by operation ${operation}`);
}

/**
 * Registers one more definition and returns what removes it: for a test of a family that
 * only the test defines (test/families/new-family.test.ts). The tables built once when
 * their module loads (NORMALIZERS and PROBES in normalize.ts, FIELDS in fields.ts,
 * FAMILY_OF_OPERATION in source.ts) hold the shipped families only; everything that runs a
 * record through rules, alerts and views asks familyOf.
 */
export function registerFamily(definition: AnyFamily): () => void {
  if (byName.has(definition.name)) throw new Error(`record family "${definition.name}" is registered already`);
  byName.set(definition.name, definition);
  return () => {
    byName.delete(definition.name);
  };
}
