import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * A bench that measures in fresh processes runs its own file again as a child: `--child ARGS…`,
 * with --smoke and --quick passed on. The child prints one JSON line last, returned here.
 */
export function runChild(benchUrl: string, args: string[]): unknown {
  const result = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(benchUrl), ...process.argv.filter((f) => f === "--smoke" || f === "--quick"), "--child", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  if (result.status !== 0) throw new Error(`child ${args.join(" ")} exited with ${result.status}`);
  const line = result.stdout.trim().split("\n").pop() ?? "";
  return line === "" ? undefined : (JSON.parse(line) as unknown);
}

/** The entry of such a bench: its child part when started with --child (given what follows it), else its main. */
export async function childOrMain(child: (args: string[]) => Promise<void>, main: () => Promise<void>): Promise<void> {
  const at = process.argv.indexOf("--child");
  if (at >= 0) await child(process.argv.slice(at + 1));
  else await main();
}
