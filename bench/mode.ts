/**
 * How large a benchmark run is, from its flags:
 * - (none): the full run, whose figures are written to bench/results/.
 * - `--quick`: a short development run; printed, not written.
 * - `--smoke`: the smallest run that still goes through every step of the benchmark, so that
 *   `npm test` (test/bench/smoke.test.ts) notices a benchmark that no longer runs. Printed,
 *   not written; its figures mean nothing, but its own checks (records seen, requests made)
 *   still throw.
 */
export const smoke = process.argv.includes("--smoke");
export const quick = smoke || process.argv.includes("--quick");

/** The size of this run: `full`, `short` for --quick, `tiny` for --smoke. */
export function sized<T>(full: T, short: T, tiny: T): T {
  return smoke ? tiny : quick ? short : full;
}
