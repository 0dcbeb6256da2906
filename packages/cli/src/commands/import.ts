/** `benchdata import FILE`: streams a CSV or NDJSON file into the live dataset, all or nothing. */
import { stat } from "node:fs/promises";
import { importFile } from "@benchdata/storage-kysely";
import { dbUrl, parse, UsageError } from "../args.ts";
import type { Command } from "../command.ts";
import { printUsage } from "../command.ts";
import { byteProgress } from "../progress.ts";
import { openDb } from "../runtime.ts";

const USAGE = `Usage: benchdata import FILE [--db URL] [--format csv|ndjson]

Loads rows of business_id, category, segment, period, metric, value (CSV with a header row, or
NDJSON). All or nothing: a bad row fails the import with its line number and changes nothing.
Each (category, period) in the file replaces what was stored for it.`;

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

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { db: { type: "string" }, format: { type: "string" } }, 1);
  if (values.help) return printUsage(USAGE);
  const file = positionals[0];
  if (!file) throw new UsageError("the FILE to import is required");
  if (values.format !== undefined && values.format !== "csv" && values.format !== "ndjson") throw new UsageError(`--format must be csv or ndjson, got "${values.format}"`);
  return runImport({ file, db: dbUrl(values.db), format: values.format as "csv" | "ndjson" | undefined });
}

/** `benchdata import`. */
export const importCommand: Command = { usage: USAGE, run };
