#!/usr/bin/env node
// `npm run build:binary`: benchdata as one self-contained executable (linux-x64 here: the host's target),
// built by `bun build --compile` from the built CLI. Inside: the Bun runtime, the service, the CLI, the
// migrations and the browser console's files; SQLite is Bun's own (bun:sqlite), so no node_modules and no
// native addon are needed beside it. better-sqlite3 is never loaded on Bun, so it is left out of the
// bundle, as is pg's optional native binding.
// Usage: node scripts/build-binary.mjs [--outfile PATH]   (default: dist/benchdata)
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const i = process.argv.indexOf("--outfile");
const outfile = i > 0 ? process.argv[i + 1] : `${root}dist/benchdata`;
const bun = `${root}node_modules/.bin/bun`;
const args = ["build", "--compile", "--minify", `${root}packages/cli/bin/benchdata.js`, "--outfile", outfile, "--external", "better-sqlite3", "--external", "pg-native"];
const started = Date.now();
const r = spawnSync(bun, args, { stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);
const mb = (statSync(outfile).size / 1e6).toFixed(1);
process.stdout.write(`built ${outfile} (${mb} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
