// The type checker and the linter, side by side: each keeps one core busy for about twenty
// seconds, and `npm test` must finish in ten minutes on two. Each one's output is printed
// whole, type checker first, and the run fails if either fails.
import { spawn } from "node:child_process";

const CHECKS = [
  { name: "typecheck", args: ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json", "--noEmit"] },
  { name: "lint", args: ["node_modules/eslint/bin/eslint.js", "."] },
];

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

const results = await Promise.all(CHECKS.map((check) => run(check.args)));
let failed = false;
for (const [i, { code, output }] of results.entries()) {
  const { name } = CHECKS[i];
  process.stdout.write(output);
  process.stdout.write(`${name}: ${code === 0 ? "passed" : `failed (exit ${code})`}\n`);
  if (code !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
