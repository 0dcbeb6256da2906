// Core's import graph: core is the runtime-agnostic centre, so it imports nothing of the packages built on it
// (client, console, CLI, adapters, stores), no file reaches outside packages/core, and its shipped sources
// import only the dependencies its package.json declares (docs/architecture.md, "Packages").
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CORE = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every module specifier of a TypeScript source: `import … from`, `export … from`, `import "x"`, `import("x")`. */
export function specifiers(text: string): string[] {
  const found: string[] = [];
  const pattern = /(?:^|[;\s])(?:import|export)\s[^;'"`]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/gm;
  for (const m of text.matchAll(pattern)) found.push((m[1] ?? m[2] ?? m[3])!);
  return found;
}

/** What is wrong with one core file's imports: another benchdata package, a path out of core, or (shipped code) an undeclared package. */
export function violations(file: string, text: string, declared: readonly string[]): string[] {
  const out: string[] = [];
  const shipped = !/\.test\.ts$/.test(file) && !file.includes(`${sep}testing${sep}`);
  for (const spec of specifiers(text)) {
    if (spec.startsWith("@benchdata/")) out.push(`${relative(CORE, file)} imports ${spec}`);
    else if (spec.startsWith(".")) {
      const target = resolve(dirname(file), spec);
      if (relative(CORE, target).startsWith("..")) out.push(`${relative(CORE, file)} imports ${spec}, outside packages/core`);
    } else if (shipped) {
      const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
      if (!declared.includes(name)) out.push(`${relative(CORE, file)} imports ${spec}, not a dependency of @benchdata/core`);
    }
  }
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

describe("core's import graph", () => {
  const pkg = JSON.parse(readFileSync(join(CORE, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const declared = Object.keys(pkg.dependencies);
  // This file is left out: its samples of forbidden imports are strings the scan would read as imports.
  const self = fileURLToPath(import.meta.url);
  const files = [...sources(join(CORE, "src")), ...sources(join(CORE, "test"))].filter((f) => f !== self);

  it("imports nothing of the client, the console, the CLI, an adapter or a store, and nothing undeclared", () => {
    expect(files.length).toBeGreaterThan(100);
    // The scan sees imports at all: the router module imports itty-router.
    expect(specifiers(readFileSync(join(CORE, "src/http/base-router.ts"), "utf8"))).toContain("itty-router");
    const found = files.flatMap((f) => violations(f, readFileSync(f, "utf8"), declared));
    expect(found).toEqual([]);
  });

  it("the check catches each kind of import it forbids", () => {
    const file = join(CORE, "src/http/example.ts");
    const text = [
      'import { createClient } from "@benchdata/client";',
      'import type { CONSOLE_ASSETS } from "@benchdata/console";',
      'export { serve } from "@benchdata/adapter-node";',
      'const m = await import("../../../cli/src/main.ts");',
      'import "node:fs";',
      'import { ok } from "./reply.ts";',
      'import * as v from "valibot";',
    ].join("\n");
    expect(violations(file, text, ["valibot"])).toEqual([
      "src/http/example.ts imports @benchdata/client",
      "src/http/example.ts imports @benchdata/console",
      "src/http/example.ts imports @benchdata/adapter-node",
      "src/http/example.ts imports ../../../cli/src/main.ts, outside packages/core",
      "src/http/example.ts imports node:fs, not a dependency of @benchdata/core",
    ]);
    // Tests may use test tools and node: modules, but never another benchdata package.
    const test = join(CORE, "src/http/example.test.ts");
    expect(violations(test, 'import fc from "fast-check";\nimport { x } from "@benchdata/cli";', [])).toEqual(["src/http/example.test.ts imports @benchdata/cli"]);
  });
});
