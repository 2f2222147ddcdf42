/**
 * What one explorer record may hold once it enters kaiawatch (docs/security.md). Its text
 * is written by strangers: one 20 MB revert message became three 20 MB outbox rows, a
 * 20 MB webhook body and 630 MB of resident memory. Every text field longer than
 * MAX_RECORD_TEXT is cut to it where records are normalised (src/families/cap-record.ts),
 * with a mark that says so and keeps the whole text's length and SHA-256; rule patterns
 * read all of what is kept (src/rules/safe-regexp.ts), so text placed after a long run of
 * filler is still seen. 16,384 UTF-16 code units: far above any revert reason, event or
 * token name, and a bound on what one pattern match can cost (bench/regex.bench.ts).
 */
export const MAX_RECORD_TEXT = 16_384;

/**
 * How deep maps and lists may nest inside one record (the API's records nest 3 or 4
 * levels); deeper parts are replaced by a mark. The JSON reader refuses an answer nested
 * deeper than MAX_JSON_DEPTH before anything walks it (src/explorer/exact-json.ts).
 */
export const MAX_RECORD_DEPTH = 16;

