import type { OperationName } from "../explorer/operations.js";
import type { RecordEnrichment } from "../model/enrichment.js";
import type { RecordFamily, WatchedRecord } from "../model/record.js";
import type { FieldSpec, FieldTemplate } from "./field-kinds.js";
import type { PreparedValue } from "./record-values.js";

/** The record of one family, its data typed. */
export type RecordOf<F extends RecordFamily> = Extract<WatchedRecord, { family: F }>;

/** The explorer's list operations that take a block range (or, for 8, a block) and so can be polled. */
export type ExplorerSourceOperation = Extract<OperationName, "accountEventLogs" | "accountNftTransfers" | "nftTransfers" | "accountInternalTransactions" | "blockInternalTransactions">;

/**
 * The node's readers (JSON-RPC, no explorer credits): the top-level transactions of each
 * block with their receipts, the log query (eth_getLogs) of every node-read watch of a
 * family together, as event logs or as NFT transfers, and each block's call traces
 * (debug_traceBlockByNumber) as internal transactions.
 */
export type NodeSourceOperation = "blockTransactions" | "nodeEventLogs" | "nodeNftTransfers" | "nodeInternalTransactions";

/**
 * Where a family's records come from. Today each family has one kind of reader, the
 * explorer's list operations or one node method; a family read from both (the node's
 * eth_getLogs beside the explorer, issue 40) lists both here, and nothing outside the
 * definition changes for it.
 */
export interface FamilyReaders {
  explorer: readonly ExplorerSourceOperation[];
  node: readonly NodeSourceOperation[];
  /** The operation an account watch of this family polls; undefined when another plan covers it (the node's transactions). */
  account: ExplorerSourceOperation | undefined;
  /**
   * How `kaiawatch explain` reads one transaction's records from the explorer: an operation
   * listing them by transaction hash, or the family's block operation filtered by the hash
   * (when the per-transaction list answers another shape); undefined when the explorer has none.
   */
  transaction: { list: Extract<OperationName, "transactionEventLogs" | "transactionNftTransfers"> } | { block: Extract<ExplorerSourceOperation, "blockInternalTransactions"> } | undefined;
}

/** The watch kinds whose every rule reads one family (the account watch chooses its families: `FamilyWatches.account`). */
export type SingleFamilyWatchKind = "collection" | "contract" | "every_block";

/**
 * The watches whose rules read a family (a rule's `source`, the config's `sources`). An
 * account watch produces it when it lists it in `sources` ("source"; "default source": also
 * when the watch names no sources and no tokens) or from its `tokens` ("tokens": a token's
 * Transfer logs); `kinds` always produce it.
 */
export interface FamilyWatches {
  account: "source" | "default source" | "tokens" | undefined;
  kinds: readonly SingleFamilyWatchKind[];
}

/** A field's shape in the stored record: a value, an object of fields, or a list (read by index: `topics.1`, `items.0.value`). */
export type RecordShape = "value" | { readonly [key: string]: RecordShape } | { readonly list: RecordShape };

/**
 * One field a condition may name. `read` is the value as received (or derived from received
 * values): the reference evaluator and `explain` use it. `prepare` is the same value in
 * comparable form (lowercase, bigint, boolean) for the compiled conditions, on the ingest
 * path: it must not allocate beyond the value. `raw` is the text as received that `prepare`
 * lowers, when it does (the rule index turns records away by it before lowering).
 */
export interface FamilyField<R> extends FieldTemplate {
  /** A field relative to the watched account (direction): why it needs one, for the error when the watch has none. */
  needsAccount?: string;
  /**
   * How the field reads on a record the node made instead of the explorer (internal
   * transactions from its traces): `absent`, the node has no such value (a rule on it is
   * refused for a watch read from the node); `differs`, the node has its own text (refused
   * under `both`, where the first source's copy makes the alert and the audit compares
   * what each matched). `why` says what the node has instead.
   */
  fromNode?: { value: "absent" | "differs"; why: string };
  /** `accounts`: the watched accounts (lowercase) a field relative to them (`needsAccount`) is read against. */
  read(record: R, field: FieldSpec, accounts: ReadonlySet<string> | undefined): unknown;
  prepare?: (record: R) => PreparedValue;
  raw?: (record: R) => string | undefined;
}

/** Adds a label and a value to an alert's view (notify/alert-view.ts cleans and cuts it). */
export type AddViewField = (label: string, value: unknown, max?: number) => void;

/** Links of an alert beyond its block and transaction, under the explorer's site. */
export interface FamilyLinks {
  contract?: string;
  token?: string;
  /** The account to link when the watch names none. */
  account?: string;
}

/**
 * Everything that makes a record family: where its records are read, how one is normalised
 * (identity key and order) and probed, the fields rules name, its summary, links, template
 * variables, alert view and the shape of its stored record. The rest of kaiawatch asks the
 * registry (registry.ts) instead of switching on the family's name.
 */
export interface FamilyDefinition<F extends RecordFamily = RecordFamily, Raw = never> {
  name: F;
  /** One and many, for digests ("3 NFT transfers"); "alert(s)" without. */
  noun?: readonly [string, string];
  readers: FamilyReaders;
  watchedBy: FamilyWatches;
  /** The lookups of one record (an `enrich:` kind) its records carry what for; the per-transaction ones apply to every family. */
  enrichments?: readonly RecordEnrichment[];
  /** The record as kept (identity key and chain order); `bounded`: its page is known to be within the record limits. */
  normalize(raw: Raw, bounded?: boolean): RecordOf<F>;
  /** The readable part without its identity (key "", order empty): what rules test before a record is kept. */
  probe(raw: Raw, bounded?: boolean): RecordOf<F>;
  /**
   * Records identical in every field can still be distinct on chain (a batch transfer listing
   * an id twice): a repeated key is numbered, not dropped as page drift (normalize.ts).
   */
  twinsPossible: boolean;
  fields: Readonly<Record<string, FamilyField<RecordOf<F>>>>;
  /** Fields a token watch's rule has on top (a Transfer log read as a token transfer); only event logs have them. */
  tokenTransferFields?: Readonly<Record<string, FamilyField<RecordOf<F>>>>;
  /** A log's topics, lowercase on demand by the prepared record (`topics[i]`). */
  topics?: (record: RecordOf<F>) => readonly string[];
  /** Decoded arguments by name (`args.NAME`). */
  args?: (record: RecordOf<F>) => readonly { name: string; value: string }[] | undefined;
  datetime(record: RecordOf<F>): string | null;
  links(record: RecordOf<F>, under: (path: string) => string): FamilyLinks;
  /** One plain-text line; on-chain text flattened and cut, never trusted. */
  summary(record: RecordOf<F>, watchedAccount: string | undefined): string;
  /** A summary template's variables of this family (`topics[i]`, `args.NAME` for indexed and named ones). */
  templateVariables: readonly string[];
  templateValue(name: string, record: RecordOf<F>, watchedAccount: string | undefined): unknown;
  /** The fields of an alert's view, read from the stored record (any JSON: documents are read back from the store). */
  view(record: unknown, add: AddViewField): void;
  /** The contract a stored record is about (collection, emitter), and what to call it in a digest. */
  contract?: { of(record: unknown): string | undefined; noun: string };
  /** One line for `kaiawatch explain`: where the record sits and what it moved. */
  describe(record: RecordOf<F>, clean: (value: unknown) => string): string;
  /** The stored record's fields (`silence --match`, `group.by`, `cooldown_key`). */
  recordShape: { readonly [key: string]: RecordShape };
}

/** A definition as the registry holds it, whatever its family. */
export interface AnyFamily extends Omit<FamilyDefinition, "normalize" | "probe"> {
  normalize(raw: never, bounded?: boolean): WatchedRecord;
  probe(raw: never, bounded?: boolean): WatchedRecord;
  /** The prepared fields, in slot order (a field's slot is its position here). */
  readonly preparers: readonly ((record: WatchedRecord) => PreparedValue)[];
  readonly rawTexts: readonly (((record: WatchedRecord) => string | undefined) | undefined)[];
  /** Field id → slot. */
  readonly slots: Readonly<Record<string, number>>;
  /** Field id (`topics` for `topics[i]`, `args` for `args.NAME`) → field, the token transfer fields included. */
  readonly fieldsById: Readonly<Record<string, FamilyField<WatchedRecord>>>;
}

/** A field's id: its name without the index or argument placeholder (`topics[i]` → `topics`, `args.NAME` → `args`). */
export const fieldIdOf = (name: string): string => name.replace(/\[i\]$|\.NAME$/, "");

/** The rules' prepared record keeps which values it has read in one 32-bit mask. */
const MAX_PREPARED_FIELDS = 32;

/**
 * Checks a definition and numbers its prepared fields (their slots in the rules' prepared
 * record). A family's slots are its own: a compiled condition reads records of one family.
 */
export function defineFamily<F extends RecordFamily, Raw>(definition: FamilyDefinition<F, Raw>): AnyFamily {
  const preparers: ((record: WatchedRecord) => PreparedValue)[] = [];
  const rawTexts: (((record: WatchedRecord) => string | undefined) | undefined)[] = [];
  const slots: Record<string, number> = {};
  const fieldsById: Record<string, FamilyField<WatchedRecord>> = {};
  const all = { ...definition.fields, ...definition.tokenTransferFields };
  for (const [name, field] of Object.entries(all)) {
    const id = fieldIdOf(name);
    fieldsById[id] = field as unknown as FamilyField<WatchedRecord>;
    if (field.prepare === undefined) continue;
    slots[id] = preparers.length;
    preparers.push(field.prepare as (record: WatchedRecord) => PreparedValue);
    rawTexts.push(field.raw as ((record: WatchedRecord) => string | undefined) | undefined);
  }
  if (preparers.length > MAX_PREPARED_FIELDS) throw new Error(`family ${definition.name}: ${preparers.length} prepared fields, at most ${MAX_PREPARED_FIELDS}`);
  return { ...(definition as unknown as AnyFamily), preparers, rawTexts, slots, fieldsById };
}
