/**
 * `benchdata import`: streams observations (CSV with a header row, or NDJSON) into a storage's live
 * benchmark cells, all or nothing.
 *
 * Rows are validated as they stream and staged (see staging.ts), never held in memory; a bad row stops
 * the import with its line number. Then one ordered pass over the staging area builds the cells (see
 * build-cells.ts), and one atomic publication replaces every (category, period) the file contains. A
 * failed import publishes nothing, so stored data is unchanged.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { extname } from "node:path";
import type { Storage } from "@benchdata/core";
import { buildCells } from "./build-cells.ts";
import type { Duplicate } from "./build-cells.ts";
import { readRows } from "./read-rows.ts";
import type { ImportFormat, ImportSource } from "./read-rows.ts";
import { importBackendOf } from "./staging.ts";
import type { ReplacedPeriod, StagedRow, Staging } from "./staging.ts";
import { ImportError, validateObservation } from "./validate-observation.ts";

/** Options of an import. */
export interface ImportOptions {
  readonly format: ImportFormat;
  /** Called every `progressEvery` rows and once at the end of reading, with the rows and bytes read so far. */
  readonly onProgress?: (rows: number, bytes?: number) => void;
  readonly progressEvery?: number;
  /**
   * The publication minimum, used only to count the cells that will not be shown (`belowMinimum`): the
   * HTTP layer applies it at query time, so lowering it later needs no re-import.
   */
  readonly minSampleSize?: number;
}

/** What an import did. */
export interface ImportSummary {
  /** Observations read. */
  readonly rows: number;
  /** Distinct business ids. */
  readonly businesses: number;
  /** Cells published (each segment, plus `all`, per category, period and metric). */
  readonly cells: number;
  /** Distinct periods in the file. */
  readonly periods: number;
  /** The (category, period) pairs in the file that held data before: their old data was replaced. */
  readonly replaced: readonly ReplacedPeriod[];
  /** The (category, period) pairs in the file that held no data before. */
  readonly added: readonly ReplacedPeriod[];
  /** Published cells with fewer businesses than `minSampleSize` (not shown until more data arrives). */
  readonly belowMinimum: number;
  readonly bytes: number;
  readonly ms: number;
}

const STAGE_BATCH = 5_000;

function duplicateError(d: Duplicate): ImportError {
  const r = d.row;
  return new ImportError(d.line, `duplicate of line ${d.firstLine}: business "${r.businessId}" already has ${r.metric} for ${r.category}/${r.segment}/${r.period}`);
}

/** Imports observations from `source` into `storage`'s live data. Rejects with an ImportError (naming the line) on a bad row. */
export async function importObservations(storage: Storage, source: ImportSource, options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const every = Math.max(1, options.progressEvery ?? 50_000);
  let bytes = 0;
  return importBackendOf(storage).withStaging(async (staging: Staging) => {
    let rows = 0;
    let batch: StagedRow[] = [];
    try {
      for await (const raws of readRows(source, options.format, (n) => (bytes += n))) {
        for (const { line, raw } of raws) {
          batch.push(validateObservation(raw, line));
          rows += 1;
          if (rows % every === 0) options.onProgress?.(rows, bytes);
        }
        if (batch.length >= STAGE_BATCH) {
          await staging.add(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await staging.add(batch);
    } catch (e) {
      if (e instanceof ImportError && e.line !== null) {
        // Report the file's first problem: a duplicate staged before this line comes first.
        if (batch.length > 0) await staging.add(batch);
        const earlier = (await buildCells(staging.ordered(), true)).duplicate;
        if (earlier && earlier.line < e.line) throw duplicateError(earlier);
      }
      throw e;
    }
    options.onProgress?.(rows, bytes);

    const built = await buildCells(staging.ordered());
    if (built.duplicate) throw duplicateError(built.duplicate);
    const businesses = rows > 0 ? await staging.countBusinesses() : 0;
    const held = built.cells.length > 0 || built.replace.length > 0 ? await staging.publish(built.cells, built.replace) : [];
    const had = new Set(held.map((r) => `${r.category}|${r.period}`));
    const min = options.minSampleSize ?? 0;
    return {
      rows,
      businesses,
      cells: built.cells.length,
      periods: built.periods,
      replaced: built.replace.filter((r) => had.has(`${r.category}|${r.period}`)),
      added: built.replace.filter((r) => !had.has(`${r.category}|${r.period}`)),
      belowMinimum: built.cells.filter((c) => c.cell.sampleSize < min).length,
      bytes,
      ms: Math.round(performance.now() - started),
    };
  });
}

/** The format a file name implies: `.csv` or `.ndjson`/`.jsonl`/`.json`, else null. */
export function formatOfPath(path: string): ImportFormat | null {
  const ext = extname(path).toLowerCase();
  if (ext === ".csv") return "csv";
  if (ext === ".ndjson" || ext === ".jsonl" || ext === ".json") return "ndjson";
  return null;
}

/** Imports a file (format from `options.format` or the extension); progress reports bytes of its total size. */
export async function importFile(
  storage: Storage,
  path: string,
  options: Omit<ImportOptions, "format" | "onProgress"> & { format?: ImportFormat; onProgress?: (rows: number, bytes: number, totalBytes: number) => void } = {},
): Promise<ImportSummary> {
  const format = options.format ?? formatOfPath(path);
  if (!format) throw new ImportError(null, `cannot tell the format of ${path}: name it .csv or .ndjson, or pass the format`);
  const total = (await stat(path)).size;
  const { onProgress, ...rest } = options;
  return importObservations(storage, createReadStream(path, { highWaterMark: 1 << 20 }), {
    ...rest,
    format,
    ...(onProgress ? { onProgress: (rows: number, bytes?: number) => onProgress(rows, bytes ?? 0, total) } : {}),
  });
}
