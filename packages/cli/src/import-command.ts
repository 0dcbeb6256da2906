/** `benchdata import FILE`: streams a CSV or NDJSON file into the live dataset, all or nothing. */
import { stat } from "node:fs/promises";
import { importFile } from "@benchdata/storage-kysely";
import { openDb } from "./runtime.ts";
import { byteProgress } from "./progress.ts";
import { UsageError } from "./args.ts";

/** Imports `file` into the database at `db`; prints progress and a summary; resolves to the exit code. */
export async function runImport(options: { file: string; db: string; format?: "csv" | "ndjson" }): Promise<number> {
  try {
    await stat(options.file);
  } catch {
    throw new UsageError(`cannot read ${options.file}`);
  }
  if (options.db === "memory:" || options.db === "memory") throw new UsageError("import needs a persistent database (sqlite:PATH or postgres://…); memory: is gone when the command exits");
  const storage = await openDb(options.db);
  const progress = byteProgress(`importing ${options.file}`);
  const format = options.format ?? (/\.(nd)?jsonl?$/i.test(options.file) ? "ndjson" : "csv");
  try {
    const summary = await importFile(storage, options.file, {
      format,
      progressEvery: 20_000,
      onProgress: (rows, bytes, total) => progress.update(bytes, total, `${rows.toLocaleString("en-US")} rows`),
    });
    progress.finish(
      `imported ${summary.rows.toLocaleString("en-US")} rows: ${summary.businesses.toLocaleString("en-US")} businesses, ` +
        `${summary.cells.toLocaleString("en-US")} cells; (category, period) pairs: ${summary.added.length} added, ${summary.replaced.length} replaced; in ${(summary.ms / 1000).toFixed(1)} s` +
        (summary.belowMinimum > 0 ? ` (${summary.belowMinimum} cells below the publication minimum will be withheld)` : ""),
    );
    if (summary.replaced.length > 0) {
      // Each version of a period is decided for publication on its own: figures the earlier version published can
      // be subtracted from this one's when its segments changed (docs/privacy.md, "Re-importing a period").
      process.stderr.write(
        `note: ${summary.replaced.map((r) => `${r.category} ${r.period}`).join(", ")} replaced earlier data. If a segment was added or grew from below the publication minimum, ` +
          "the earlier version's figures can be subtracted from this one's: publish late segments with the next period (docs/operations.md, import).\n",
      );
    }
    process.stdout.write(`${JSON.stringify({ rows: summary.rows, businesses: summary.businesses, cells: summary.cells, added: summary.added, replaced: summary.replaced, ms: Math.round(summary.ms) })}\n`);
    return 0;
  } catch (e) {
    progress.finish(`import failed, nothing was changed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await storage.close();
  }
}
