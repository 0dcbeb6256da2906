/**
 * Import staging for SQLite: a private temporary database (SQLite's "" file: on disk, deleted on close)
 * on its own connection. Staging there never takes the store's write lock, so a running server keeps
 * admitting requests while a large file streams in; only the final publication (cells are far fewer
 * than rows) is one short IMMEDIATE transaction on the store.
 */
import type { PreparedCell } from "@benchdata/core";
import { RowCodec } from "../import/staging.ts";
import { openSqlite } from "./driver.ts";
import type { ReplacedPeriod, StagedRow, Staging } from "../import/staging.ts";

const READ_BATCH = 10_000;
// Rows per INSERT: one statement call per 200 rows rather than per row (5 parameters a row).
const INSERT_ROWS = 200;

/** Runs `fn` with a staging area whose `publish` hands the built cells to the store; the temporary database is gone afterwards. */
export async function withSqliteStaging<T>(publish: (cells: readonly PreparedCell[], replace: readonly ReplacedPeriod[]) => Promise<ReplacedPeriod[]>, fn: (staging: Staging) => Promise<T>): Promise<T> {
  const db = await openSqlite("");
  try {
    // Sorting a million rows: let the sorter use some memory, then spill to temporary files.
    db.pragma("cache_size = -32000");
    db.pragma("temp_store = FILE");
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.exec("CREATE TABLE obs (grp INTEGER NOT NULL, business_id TEXT NOT NULL, seg INTEGER NOT NULL, line INTEGER NOT NULL, value REAL NOT NULL)");
    const codec = new RowCodec();
    const values = (n: number): string => Array.from({ length: n }, () => "(?, ?, ?, ?, ?)").join(", ");
    const insertMany = db.prepare(`INSERT INTO obs (grp, business_id, seg, line, value) VALUES ${values(INSERT_ROWS)}`);
    const addAll = db.transaction((rows: readonly StagedRow[]) => {
      const params: (string | number)[] = [];
      let i = 0;
      for (; i + INSERT_ROWS <= rows.length; i += INSERT_ROWS) {
        params.length = 0;
        for (let j = i; j < i + INSERT_ROWS; j++) {
          const r = rows[j]!;
          params.push(codec.group(r), r.businessId, codec.segment(r.segment), r.line, r.value);
        }
        insertMany.run(params);
      }
      if (i < rows.length) {
        params.length = 0;
        for (let j = i; j < rows.length; j++) {
          const r = rows[j]!;
          params.push(codec.group(r), r.businessId, codec.segment(r.segment), r.line, r.value);
        }
        db.prepare(`INSERT INTO obs (grp, business_id, seg, line, value) VALUES ${values(rows.length - i)}`).run(params);
      }
    });
    const staging: Staging = {
      async add(rows) {
        addAll(rows);
      },
      async *ordered() {
        const it = db.prepare("SELECT grp, business_id, seg, line, value FROM obs ORDER BY grp, business_id, seg, line").raw(true).iterate() as IterableIterator<[number, string, number, number, number]>;
        let batch: StagedRow[] = [];
        for (const [grp, businessId, seg, line, value] of it) {
          batch.push(codec.row(line, businessId, grp, seg, value));
          if (batch.length >= READ_BATCH) {
            yield batch;
            batch = [];
          }
        }
        if (batch.length > 0) yield batch;
      },
      async countBusinesses() {
        return (db.prepare("SELECT count(DISTINCT business_id) AS n FROM obs").get() as { n: number }).n;
      },
      publish,
    };
    return await fn(staging);
  } finally {
    db.close();
  }
}
