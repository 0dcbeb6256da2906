/**
 * Import benchmark: writes a CSV of `rows` observations (default 1,000,000) to a temporary directory,
 * imports it into a fresh store (a temporary SQLite file by default; `--pg` for a throwaway PostgreSQL
 * database, `--db URL` for any), and prints rows/s and the peak RSS of the process during the import.
 *
 *   npx tsx --tsconfig packages/storage-kysely/tsconfig.json packages/storage-kysely/bench/import.bench.ts [--rows N] [--pg | --db URL]
 *
 * Targets: 1M rows in under 60 s and under 500 MB RSS.
 */
import { once } from "node:events";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CATEGORIES, metricsOf } from "@benchdata/core";
import { importFile } from "../src/import/import-observations.ts";
import type { ImportSummary } from "../src/import/import-observations.ts";
import { openStorage } from "../src/open-storage.ts";
import { createTestDatabase } from "../src/test-support/pg-test-database.ts";

/** Options of the benchmark. */
export interface ImportBenchOptions {
  readonly rows?: number;
  /** The store to import into; default a temporary SQLite file. */
  readonly url?: string;
  /** Create (and drop) a throwaway PostgreSQL database through the test server instead. */
  readonly postgres?: boolean;
  readonly log?: (line: string) => void;
}

/** What the benchmark measured. */
export interface ImportBenchResult {
  readonly store: string;
  readonly rows: number;
  readonly fileMb: number;
  readonly generateMs: number;
  readonly importMs: number;
  readonly rowsPerSecond: number;
  /** Peak resident set size sampled during the import (MB). */
  readonly peakRssMb: number;
  readonly summary: ImportSummary;
}

const SEGMENTS = ["smb", "mid_market", "enterprise", "micro"];
// Ten years of quarters and three of months: room for about 4.8 million distinct rows.
const PERIODS = [
  ...Array.from({ length: 40 }, (_, i) => `${2016 + Math.floor(i / 4)}-Q${(i % 4) + 1}`),
  ...Array.from({ length: 36 }, (_, i) => `${2023 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, "0")}`),
];

/** Writes `rows` valid, distinct observations as CSV; businesses keep one category and segment. */
export async function writeBenchCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path, { highWaterMark: 1 << 20 });
  out.write("business_id,category,segment,period,metric,value\n");
  let seed = 0x9e3779b9;
  const random = (): number => {
    // mulberry32: deterministic, so every run imports the same file.
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const businesses = 10_000;
  let written = 0;
  let chunk = "";
  outer: for (const period of PERIODS) {
    for (let b = 0; b < businesses; b++) {
      const category = CATEGORIES[b % CATEGORIES.length]!;
      const segment = SEGMENTS[Math.floor(b / CATEGORIES.length) % SEGMENTS.length]!;
      for (const metric of metricsOf(category)) {
        if (written >= rows) break outer;
        chunk += `biz_${b},${category},${segment},${period},${metric},${(random() * 100).toFixed(4)}\n`;
        written += 1;
        if (chunk.length > 1 << 16) {
          if (!out.write(chunk)) await once(out, "drain");
          chunk = "";
        }
      }
    }
  }
  if (written < rows) throw new Error(`the generator yields at most ${written} distinct rows`);
  out.end(chunk);
  await once(out, "finish");
}

/** Generates the file, imports it, and reports throughput and peak memory. */
export async function runImportBench(options: ImportBenchOptions = {}): Promise<ImportBenchResult> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? ((line: string) => console.log(line));
  const dir = mkdtempSync(join(tmpdir(), "benchdata-import-bench-"));
  const pgDb = options.postgres ? await createTestDatabase() : null;
  const url = options.url ?? pgDb?.url ?? `sqlite:${join(dir, "bench.db")}`;
  try {
    const csv = join(dir, "observations.csv");
    let t = performance.now();
    await writeBenchCsv(csv, rows);
    const generateMs = performance.now() - t;
    const fileMb = statSync(csv).size / 1e6;
    log(`generated ${rows.toLocaleString("en")} rows (${fileMb.toFixed(1)} MB) in ${(generateMs / 1000).toFixed(1)} s`);

    const storage = await openStorage(url);
    await storage.migrate();
    let peak = process.memoryUsage().rss;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
    t = performance.now();
    let summary: ImportSummary;
    try {
      summary = await importFile(storage, csv, {
        onProgress: (n, bytes, total) => {
          peak = Math.max(peak, process.memoryUsage().rss);
          if (n % 250_000 === 0) log(`  ${n.toLocaleString("en")} rows, ${((100 * bytes) / total).toFixed(0)}% of the file, ${((performance.now() - t) / 1000).toFixed(1)} s`);
        },
      });
    } finally {
      clearInterval(sample);
      await storage.close();
    }
    const importMs = performance.now() - t;
    peak = Math.max(peak, process.memoryUsage().rss);
    const result: ImportBenchResult = {
      store: storage.kind,
      rows: summary.rows,
      fileMb,
      generateMs,
      importMs,
      rowsPerSecond: summary.rows / (importMs / 1000),
      peakRssMb: peak / 1e6,
      summary,
    };
    log(
      `${result.store}: imported ${result.rows.toLocaleString("en")} rows into ${summary.cells.toLocaleString("en")} cells in ${(importMs / 1000).toFixed(1)} s = ` +
        `${Math.round(result.rowsPerSecond).toLocaleString("en")} rows/s; peak RSS ${result.peakRssMb.toFixed(0)} MB`,
    );
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await pgDb?.drop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const rows = arg("--rows");
  const url = arg("--db");
  await runImportBench({ ...(rows ? { rows: Number(rows) } : {}), ...(url ? { url } : {}), postgres: process.argv.includes("--pg") });
}
