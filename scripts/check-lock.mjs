// Fails when package-lock.json lacks an entry for an optional dependency of a locked package.
// A lock written by a plain `npm install` on one platform can drop the other platforms' optional
// packages (@deno/*, @rollup/*, @esbuild/*), and `npm ci` then refuses the lock as out of sync on a
// fresh clone. `npm install --package-lock-only` writes them all.
import { readFileSync } from "node:fs";

const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8"));
const packages = lock.packages ?? {};
const missing = [];
let checked = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    checked++;
    // npm places a dependency beside its dependent or hoists it towards the root: look in each ancestor.
    const parts = path === "" ? [] : path.split("node_modules/").slice(1).map((p) => p.replace(/\/$/, ""));
    let found = false;
    for (let depth = parts.length; depth >= 0 && !found; depth--) {
      const prefix = parts.slice(0, depth).map((p) => `node_modules/${p}/`).join("");
      found = `${prefix}node_modules/${name}` in packages;
    }
    if (!found) missing.push(`${name} (optional dependency of ${path || "the root"})`);
  }
}
if (missing.length > 0) {
  console.error(`package-lock.json lacks ${missing.length} optional platform package(s):`);
  for (const m of missing.slice(0, 20)) console.error(`  ${m}`);
  console.error("Regenerate it with: npm install --package-lock-only");
  process.exit(1);
}
console.log(`package-lock.json lists all ${checked} optional dependencies of its packages.`);
