import { isMap, isScalar, visit, type Document } from "yaml";
import { secretsOfUrl } from "../common/url-secrets.js";
import { SINK_SECRET_KEY_NAMES } from "../notify/sinks/index.js";

/**
 * Keys whose value is a credential wherever they sit: the typed config (secretsOfConfig)
 * is only built from a valid file, but an error report is made from a broken one, so the
 * secrets to hide from it are found by key name in the raw tree, whatever its shape. The
 * sinks' keys come from what each sink declares (`secretKeys`), so a new sink's key is
 * hidden without a change here; the others are the sections' own: `explorer.api_key`,
 * `status.token`, `store.url`. `password` is not a key of the schema: a user who writes it
 * by mistake still means a secret.
 */
export const SECRET_KEYS: ReadonlySet<string> = new Set(["api_key", "token", "url", "password", ...SINK_SECRET_KEY_NAMES]);

/** Keys whose value is an endpoint URL: every part of it but names is a secret (src/common/url-secrets.ts). */
const ENDPOINT_URL_KEYS: ReadonlySet<string> = new Set(["base_url", "rpc_url", "url"]);

/** `api_key:SECRET` (no space after the colon) is one plain scalar, not a pair. */
const GLUED_PAIR = /^\s*([A-Za-z_]+)\s*:\s*(\S.*)$/s;

/** `${VAR}` alone names a secret but is none; the value it gives is collected after substitution. */
const ONLY_A_REFERENCE = /^\$\{[^}\s]*\}?$/;

function addText(out: Set<string>, text: string): void {
  const trimmed = text.trim();
  if (trimmed === "" || ONLY_A_REFERENCE.test(trimmed)) return;
  out.add(trimmed);
  // A plain scalar folded over a mis-indented line ("SECRET max_retries") carries the
  // secret as its first line; the lines after it are the user's next keys, not secrets.
  const first = trimmed.split(/\r?\n/, 1)[0]?.trim() ?? "";
  if (first !== "") out.add(first);
}

/**
 * Every string under a secret-bearing key in the document, keys of nested maps included
 * (a value followed by a mis-indented line becomes the key of a nested map), as it reads
 * now: called before `${VAR}` substitution it finds literal secrets, after it the
 * substituted ones. Over-collecting costs only a `[redacted]` in an error message.
 */
export function secretsOfDocument(doc: Document, text: string): string[] {
  const found = new Set<string>();
  const collectUnder = (node: unknown) => {
    if (isScalar(node)) {
      if (node.value !== null && node.value !== undefined) addText(found, String(node.value));
      if (node.range) addText(found, text.slice(node.range[0], node.range[1]).replace(/^["']|["']$/g, ""));
      return;
    }
    if (node === null || typeof node !== "object") return;
    visit(node as Parameters<typeof visit>[0], {
      Scalar(_key, scalar) {
        collectUnder(scalar);
      },
    });
  };
  visit(doc, {
    Pair(_key, pair) {
      const name = isScalar(pair.key) ? String(pair.key.value)?.toLowerCase() : undefined;
      if (name === "headers" && isMap(pair.value)) {
        // Header names are not secret (and name the place of a mistake); their values are.
        for (const item of pair.value.items) collectUnder(item.value);
      } else if (name !== undefined && SECRET_KEYS.has(name)) collectUnder(pair.value);
      if (name !== undefined && ENDPOINT_URL_KEYS.has(name) && isScalar(pair.value) && typeof pair.value.value === "string") {
        for (const part of secretsOfUrl(pair.value.value.trim(), "endpoint")) addText(found, part);
      }
      return undefined;
    },
    Scalar(_key, scalar) {
      if (typeof scalar.value !== "string") return;
      // Any URL, under any key: its user info, key-like path and query (an endpoint's every part but names, above).
      for (const part of secretsOfUrl(scalar.value.trim())) addText(found, part);
      const glued = GLUED_PAIR.exec(scalar.value);
      if (glued?.[1] !== undefined && glued[2] !== undefined && SECRET_KEYS.has(glued[1].toLowerCase())) addText(found, glued[2]);
    },
  });
  return [...found];
}
