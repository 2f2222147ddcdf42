/**
 * `npm run bench [-- NAME… --quick]`: runs every bench/*.bench.ts (or the named ones) one
 * after another, each in its own process so that one benchmark's heap does not skew the
 * next. Flags are passed to each benchmark (--quick: a short development run whose figures
 * are printed, not written to bench/results/).
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
// Names select benchmarks; flags (--quick) go to each of them.
const args = process.argv.slice(2);
const wanted = args.filter((a) => !a.startsWith("--"));
const flags = args.filter((a) => a.startsWith("--"));
const all = readdirSync(dir).filter((f) => f.endsWith(".bench.ts")).sort();
const selected = wanted.length ? all.filter((f) => wanted.some((w) => f.startsWith(w))) : all;
if (selected.length === 0) {
  console.error(`no benchmark matches ${wanted.join(", ")}; have: ${all.join(", ")}`);
  process.exit(2);
}
let failed = 0;
for (const file of selected) {
  console.log(`\n# ${file}\n`);
  const result = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", `${dir}${file}`, ...flags], { stdio: "inherit" });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
