/**
 * `npm run bench [-- NAME…]`: runs every bench/*.bench.ts (or the named ones) one after
 * another, each in its own process so that one benchmark's heap does not skew the next.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const wanted = process.argv.slice(2);
const all = readdirSync(dir).filter((f) => f.endsWith(".bench.ts")).sort();
const selected = wanted.length ? all.filter((f) => wanted.some((w) => f.startsWith(w))) : all;
if (selected.length === 0) {
  console.error(`no benchmark matches ${wanted.join(", ")}; have: ${all.join(", ")}`);
  process.exit(2);
}
let failed = 0;
for (const file of selected) {
  console.log(`\n# ${file}\n`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `${dir}${file}`], { stdio: "inherit" });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
