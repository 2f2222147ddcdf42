/**
 * What oversized and deeply nested records cost now that they are bounded where they enter
 * (issue 29, item 8): a record holding a 20 MB revert text (the probe) cut by
 * capRecord (a SHA-256 of the whole, one slice), the size of the alert row it becomes, the
 * JSON reader's refusal of a record nested 100,000 deep, and the reader's depth pass on an
 * ordinary 2,000-record page against plain JSON.parse. The worst one pattern match can cost
 * on the text that is kept is bench/regex.bench.ts's "the text a rule reads" (it reads
 * MAX_MATCHED_TEXT, which is now MAX_RECORD_TEXT).
 */
import { parseExactJson, quoteExactNumbers } from "../src/explorer/exact-json.js";
import { decodeBody } from "../src/http/request.js";
import { MAX_RECORD_TEXT } from "../src/model/record-limits.js";
import { compileSafePattern } from "../src/rules/safe-regexp.js";
import { NORMALIZERS, PROBES } from "../src/watch/normalize.js";
import { capRecord } from "../src/families/cap-record.js";
import type { InternalTransactionListItem } from "../src/explorer/types.js";
import { report, type BenchFigure } from "./lib.js";
import { loadNote, median, round, seededRandom } from "./support.js";
import { quick, sized } from "./mode.js";

const RUNS = sized(15, 3, 1);
const MB = 1024 * 1024;

const item = (message: string, callId: number): InternalTransactionListItem => ({
  call_id: callId,
  block_id: 1000,
  transaction_hash: `0x${"ab".repeat(32)}`,
  transaction_index: 0,
  type: "CALL",
  from: `0x${"11".repeat(20)}`,
  to: `0x${"22".repeat(20)}`,
  amount: "0",
  error: "execution reverted",
  transaction_status: { status: "Fail", fail_message: message },
});

function timed(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return median(times);
}

// 1. A 20 MB revert text entering as a record: probe (what rules read) then normalise (what is kept).
const huge = `${"x".repeat(20 * MB - 5)}drain`;
let row = 0;
const capMs = timed(() => {
  const data = item(huge, 1);
  PROBES.internal_transactions(data);
  const record = NORMALIZERS.internal_transactions(data);
  row = JSON.stringify(record.data).length;
});
const rssBefore = process.memoryUsage().rss;

// 2. The worst pattern a rule may write, on what is kept of it (NFA: program size × text).
const worstPattern = compileSafePattern("/(?:a|b)*a(?:a|b){288}c/i");
if (!worstPattern.ok) throw new Error(worstPattern.message);
// Random a/b (the NFA's worst text, as in regex.bench.ts); the "c" it needs is in the cut's mark.
const random = seededRandom(0x63757473);
const abText = Array.from({ length: 20 * MB }, () => (random() < 0.5 ? "a" : "b")).join("");
const keptHostile = (() => {
  const data = item(abText, 2);
  return NORMALIZERS.internal_transactions(data).data as InternalTransactionListItem;
})().transaction_status?.fail_message ?? "";
const worstMatchMs = timed(() => {
  const fresh = compileSafePattern("/(?:a|b)*a(?:a|b){288}c/i");
  if (fresh.ok) fresh.pattern.test(keptHostile);
});

// 3. A record nested 100,000 deep: refused by the reader before anything walks it.
const deepPage = `{"results":[{"extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}],"paging":{"total_count":1,"current_page":1,"last":true,"total_page":1}}`;
const refuseMs = timed(() => {
  try {
    parseExactJson(deepPage);
  } catch {
    // refused: what is timed
  }
});

// 4. An ordinary full page: 2,000 records, about 1 MB: the reader (depth pass + exact numbers + parse) against JSON.parse.
const page = JSON.stringify({ results: Array.from({ length: 2000 }, (_, i) => item(`revert reason ${i}`, i)), paging: { total_count: 2000, current_page: 1, last: true, total_page: 1 } });
const parseMs = timed(() => JSON.parse(page));
const readerMs = timed(() => parseExactJson(page));
const beforeMs = timed(() => JSON.parse(quoteExactNumbers(page)));
// The page as the explorer client reads its body: from 256 KiB to 1 MiB, padded with spaces to an external string.
const bytes = Buffer.from(page, "latin1");
const asRead = decodeBody([bytes], bytes.length);
const asReadParseMs = timed(() => JSON.parse(asRead));
const asReadReaderMs = timed(() => parseExactJson(asRead));

// 5. What the caps cost an ordinary record: the walk capRecord makes (twice: probe, then normalise).
const ordinary = JSON.parse(page) as { results: InternalTransactionListItem[] };
const walkMs = timed(() => {
  for (const record of ordinary.results) {
    capRecord(record);
    capRecord(record);
  }
});

const figures: BenchFigure[] = [
  { name: "a record with a 20 MB revert text: probe + normalise (SHA-256 of the whole, cut), median", value: round(capMs, 1), unit: "ms" },
  { name: "that record as stored and sent (its JSON)", value: row, unit: "characters", target: `≤ ${MAX_RECORD_TEXT.toLocaleString("en-US")} + the record's other fields`, ok: row <= MAX_RECORD_TEXT + 1024 },
  { name: "resident memory after cutting it (the 20 MB text itself is 40 MB as UTF-16)", value: round(rssBefore / MB, 0), unit: "MiB" },
  { name: `worst pattern a rule may write (/(?:a|b)*a(?:a|b){288}c/i, cold) on the ${MAX_RECORD_TEXT.toLocaleString("en-US")} characters kept of 20 MB of random a/b, median`, value: round(worstMatchMs, 1), unit: "ms", target: "≤ 1,000 ms", ok: worstMatchMs <= 1000 },
  { name: "a page holding a record nested 100,000 deep: refused by the reader, median", value: round(refuseMs, 2), unit: "ms" },
  { name: "a 2,000-record page (~1 MB): the reader (depth pass, exact numbers, parse), median", value: round(readerMs, 2), unit: "ms", baseline: round(parseMs, 2) },
  { name: "the same page: the reader without the depth pass (before this change), median", value: round(beforeMs, 2), unit: "ms", baseline: round(parseMs, 2) },
  { name: `the same page as the explorer client reads its body (${(asRead.length / MB).toFixed(2)} MB, padded with spaces to an external string): the reader, median`, value: round(asReadReaderMs, 2), unit: "ms", baseline: round(asReadParseMs, 2) },
  { name: "the caps' walk over those 2,000 ordinary records, twice each (probe and normalise), median", value: round(walkMs, 2), unit: "ms", baseline: round(parseMs, 2) },
];

report(
  "record-caps",
  figures,
  [
    `Texts are cut at MAX_RECORD_TEXT = ${MAX_RECORD_TEXT.toLocaleString("en-US")} UTF-16 code units (mark included); maps and lists deeper than 16 levels inside a record are replaced by a mark; the reader refuses answers nested deeper than 64 levels (KW_EXPLORER_BAD_RESPONSE, not retried). ${RUNS} runs each; medians.`,
    "Baseline of the page rows: JSON.parse of the same text in the same run; of the caps' walk, JSON.parse of the page.",
    loadNote("when the run ended"),
  ],
  { write: !quick },
);
