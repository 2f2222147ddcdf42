import type { RecordFamily } from "../model/record.js";
import type { WitnessRole } from "../model/witness-role.js";
import type { FieldSpec, FieldTemplate, TokenFieldContext } from "../families/field-kinds.js";
import { fieldIdOf, type FamilyField } from "../families/define-family.js";
import { familyDefinitions, familyOf, tokenTransferFamily } from "../families/registry.js";

export { OPERATORS, OPERATORS_BY_KIND, type FieldKind, type FieldSpec, type FieldTemplate, type Operator, type TokenFieldContext } from "../families/field-kinds.js";

/** Every field a condition may name, per record family, with a line of documentation (from the family definitions). */
export const FIELDS: Readonly<Record<RecordFamily, Readonly<Record<string, FieldTemplate>>>> = Object.fromEntries(
  familyDefinitions().map((definition) => [definition.name, definition.fields]),
) as unknown as Record<RecordFamily, Readonly<Record<string, FieldTemplate>>>;

/**
 * The fields a token watch's rule has on top of event_logs: the Transfer log read as a
 * transfer of the token the rule is compiled for (from its topics and data, never from the
 * explorer's decoded items). Only with a token context: on other logs they mean nothing.
 */
export const TOKEN_TRANSFER_FIELDS: Readonly<Record<string, FieldTemplate>> = tokenTransferFamily().tokenTransferFields ?? {};

export type FieldResolution = { ok: true; field: FieldSpec } | { ok: false; message: string };

const TOPIC_FIELD = /^topics\[(\d+)\]$/;
const ARG_FIELD = /^args\.(.+)$/s;

/** Resolves a field name written in a condition against the rule's source. */
export function resolveField(name: string, context: { family: RecordFamily; watchedAccounts?: ReadonlySet<string>; token?: TokenFieldContext; reader?: WitnessRole | "both" }): FieldResolution {
  const definition = familyOf(context.family);
  const extra = definition.tokenTransferFields;
  const tokenFields = context.token !== undefined && extra !== undefined;
  const fields: Readonly<Record<string, FamilyField<never>>> = tokenFields ? { ...definition.fields, ...extra } : definition.fields;
  const known = () => Object.keys(fields).join(", ");
  const topic = TOPIC_FIELD.exec(name);
  const arg = ARG_FIELD.exec(name);
  const id = topic ? "topics[i]" : arg ? "args.NAME" : name;
  const template = Object.hasOwn(fields, id) ? fields[id] : undefined;
  if (!template || name === "topics[i]" || name === "args.NAME") {
    const elsewhere = familyDefinitions().filter((f) => f.name !== context.family && Object.hasOwn(f.fields, id)).map((f) => f.name);
    const token = extra !== undefined && !tokenFields && Object.hasOwn(extra, id) ? " and of the token transfers of an account watch with `tokens:`" : "";
    const hint = elsewhere.length ? ` (it is a field of ${elsewhere.join(" and ")}${token})` : token ? ` (it is a field${token.slice(4)})` : "";
    return { ok: false, message: `unknown field "${name}" for ${context.family} records${hint}; fields: ${known()}` };
  }
  const fieldId = fieldIdOf(id);
  // Every key written out, in one order: objects made by spreading take a hidden class of
  // their own in V8, and a rule keeps its fields for the life of the daemon (10,000 rules,
  // 10,000 hidden classes).
  const field: FieldSpec = {
    name,
    id: fieldId,
    kind: template.kind,
    index: undefined,
    arg: undefined,
    values: template.values,
    operand: template.operand,
    // A token watch's argument bounds may be written in its tokens' units (operand.ts).
    token: tokenFields && (Object.hasOwn(extra, id) || id === "args.NAME") ? context.token : undefined,
    slot: Object.hasOwn(definition.slots, fieldId) ? definition.slots[fieldId] : undefined,
  };
  if (topic) {
    const index = Number(topic[1]);
    if (index > 3) return { ok: false, message: `"${name}": a log has at most 4 topics, topics[0] to topics[3]` };
    field.index = index;
  }
  if (arg) field.arg = arg[1] as string;
  const fromNode = template.fromNode;
  if (fromNode !== undefined && context.reader !== undefined && (context.reader === "both" || (context.reader === "node" && fromNode.value === "absent"))) {
    const what = fromNode.value === "absent" ? "has no value in the node's records" : "has another text in the node's records than in the explorer's, and with source: both either may make the alert";
    return { ok: false, message: `"${name}" ${what} (${fromNode.why}); this watch reads ${context.family} from the node (source: ${context.reader}, chain.traces)` };
  }
  // A field relative to the watched accounts is read against those the condition is tested with (compile-condition.ts), not against these.
  if (template.needsAccount !== undefined && context.watchedAccounts === undefined) return { ok: false, message: `"${name}" needs a watch of an account (${template.needsAccount})` };
  // A field that depends on nothing of its watch is one object for every rule that names it.
  if (field.token === undefined) return { ok: true, field: shared(context.family, field) };
  return { ok: true, field };
}

// Bounded by the fields a config names; specs are never changed once resolved.
const SHARED_FIELDS = new Map<string, FieldSpec>();
const MAX_SHARED_FIELDS = 10_000;

function shared(family: RecordFamily, field: FieldSpec): FieldSpec {
  const key = `${family}\u0000${field.name}`;
  const known = SHARED_FIELDS.get(key);
  if (known !== undefined) return known;
  if (SHARED_FIELDS.size < MAX_SHARED_FIELDS) SHARED_FIELDS.set(key, field);
  return field;
}
