#!/usr/bin/env node
// `npm pack` and `npm publish` run this first (the `prepack` script), in the checkout.
//
// 1. dist/ is built afresh (scripts/build.mjs, as `npm run build`, with bin.js's run bit):
//    tsc's incremental build never deletes the output of a source file that was removed,
//    and such a file would ship. (`prepare` keeps building incrementally for `npm ci` in a
//    checkout, where a stale file does no harm.)
//    `--no-build` skips it when dist/ was just built (the pack-and-install test).
// 2. npm-shrinkwrap.json is written from package-lock.json: a package that carries one is
//    installed with exactly the dependency versions the checkout was tested with (and from
//    npm's cache when they are there), not whatever the ranges resolve to on the day. The
//    `postpack` script removes it again; package-lock.json stays the checkout's lockfile.
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
if (process.argv[2] === "--remove-shrinkwrap") {
  rmSync(`${root}/npm-shrinkwrap.json`, { force: true });
} else {
  if (!process.argv.includes("--no-build")) {
    rmSync(`${root}/dist`, { recursive: true, force: true });
    execFileSync(process.execPath, [`${root}/scripts/build.mjs`], { stdio: "inherit" });
  }
  copyFileSync(`${root}/package-lock.json`, `${root}/npm-shrinkwrap.json`);
}
