// The storage conformance suite and the SQL stores' extra checks on the real Bun and Deno runtimes (the
// `bun` and `deno` npm packages ship the binaries), on memory, SQLite (each runtime's own driver) and
// PostgreSQL. Node runs the same suites in src/*-storage.test.ts; the multi-process exactness test runs
// each runtime's processes in src/multi-process.test.ts. docs/runtimes.md has the table.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pgAvailableForTests } from "../src/test-support/pg-test-database.ts";

const bin = (name: string): string => fileURLToPath(new URL(`../../../node_modules/.bin/${name}`, import.meta.url));
const dir = fileURLToPath(new URL("./runtimes/", import.meta.url));
const pgOn = await pgAvailableForTests("runtimes");
const stores = pgOn ? "memory,sqlite,postgres" : "memory,sqlite";

const RUNS = {
  bun: { args: ["test", "./conformance.runtime.ts"], driver: "bun:sqlite", summary: /(\d+) pass\s+(\d+) fail/ },
  deno: { args: ["test", "--no-check", "-A", "--config", "deno.json", "conformance.runtime.ts"], driver: "node:sqlite", summary: /(?:ok|FAILED) \| (\d+) passed \| (\d+) failed/ },
} as const;

describe.each(Object.keys(RUNS) as (keyof typeof RUNS)[])("storage conformance on %s", (runtime) => {
  it(`passes on ${stores}`, () => {
    const run = RUNS[runtime];
    expect(existsSync(bin(runtime)), `${runtime} binary missing: run npm ci`).toBe(true);
    const r = spawnSync(bin(runtime), run.args, {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, BENCHDATA_STORES: stores, BENCHDATA_EXPECT_SQLITE_DRIVER: run.driver, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      timeout: 240_000,
    });
    const out = `${r.stdout}\n${r.stderr}`;
    const m = run.summary.exec(out);
    expect(m, out.slice(-4000)).not.toBeNull();
    expect(Number(m![2]), out.slice(-6000)).toBe(0);
    // memory and SQLite: the suite twice plus SQLite's own checks and extras; PostgreSQL adds the suite and extras again.
    expect(Number(m![1])).toBeGreaterThan(pgOn ? 160 : 110);
    expect(r.status, out.slice(-4000)).toBe(0);
  }, 300_000);
});
