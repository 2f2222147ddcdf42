#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ (incrementally), then gives the command its run bit.
// tsc writes every file 0644, and dist/ is made afresh by `npm pack` (scripts/prepack.mjs) and
// on a fresh checkout: without the bit, `npx kaiawatch` in the checkout, which runs
// dist/cli/bin.js as package.json's `bin` names it, says "Permission denied".
import { execFileSync } from "node:child_process";
import { chmodSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, "-p", `${root}/tsconfig.build.json`], { stdio: "inherit" });
const bin = `${root}/dist/cli/bin.js`;
chmodSync(bin, statSync(bin).mode | 0o111);
