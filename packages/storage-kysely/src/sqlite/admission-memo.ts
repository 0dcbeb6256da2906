/**
 * What one SQLite connection remembers between its admission batches, so that the hot path stops re-reading
 * rows it wrote itself: each key's window log, each account's day counter, and the remembered lookups
 * (`expect`) it has already checked against the key, hash and account rows.
 *
 * Remembering is only safe while nothing else has changed the database, and SQLite says when that is. Every
 * batch starts, holding the write lock, by reading a `DatabaseMark`: the file's `data_version` (it moves when
 * ANY other connection commits: another process, an import, a second storage on the same file) and this
 * connection's `total_changes()` (it moves with every row this connection writes). The batch ends by
 * recording the mark its own writes left. If the next batch finds a different mark, something other than
 * admission wrote in between (a rotation, a revocation, an account update, here or elsewhere) and everything
 * is forgotten before deciding. A batch that fails forgets everything too (its writes were rolled back).
 * So a remembered row is always exactly the row on disk, and the decisions are those of a fresh read.
 */
import { BoundedMap } from "../bounded-map.ts";
import type { ChunkedWindow } from "./window-chunks.ts";

/** Where a connection stands: another connection's commit moves `dataVersion`, this connection's writes `totalChanges`. */
export interface DatabaseMark {
  readonly dataVersion: number;
  readonly totalChanges: number;
}

/** An account's UTC-day counter as stored. */
export interface DayCount {
  day: number;
  count: number;
}

/** A remembered lookup found to hold: the hash names this active, unretired key of this account, at this version. */
export interface CheckedExpectation {
  readonly keyId: string;
  readonly accountId: string;
  readonly version: number;
}

/** The rows one connection's admissions remember between batches (see the module comment). */
export interface AdmissionMemo {
  /** Starts a batch at `mark`: forgets everything unless it is the mark the last batch ended at. */
  begin(mark: DatabaseMark): void;
  /** Ends a batch whose writes (still uncommitted) leave the connection at `mark`. */
  end(mark: DatabaseMark): void;
  /** Forgets everything (a batch failed, or the store is closing). */
  forget(): void;
  /** Window logs by key id, as stored (with a few of their chunks). */
  readonly windows: BoundedMap<ChunkedWindow>;
  /** Day counters by account id, as stored. */
  readonly days: BoundedMap<DayCount>;
  /** Remembered lookups, by key hash, that the hash, key and account rows were found to match. */
  readonly expectations: BoundedMap<CheckedExpectation>;
}

/** An AdmissionMemo remembering at most `capacity` windows, day counters and expectations each. */
export function admissionMemo(capacity: number): AdmissionMemo {
  let mark: DatabaseMark | null = null;
  const windows = new BoundedMap<ChunkedWindow>(capacity);
  const days = new BoundedMap<DayCount>(capacity);
  const expectations = new BoundedMap<CheckedExpectation>(capacity);
  const forget = (): void => {
    mark = null;
    windows.clear();
    days.clear();
    expectations.clear();
  };
  return {
    begin(current) {
      if (mark === null || mark.dataVersion !== current.dataVersion || mark.totalChanges !== current.totalChanges) forget();
      // Until `end`, the batch is in flight: if it never ends (it threw), the next batch forgets.
      mark = null;
    },
    end(current) {
      mark = current;
    },
    forget,
    windows,
    days,
    expectations,
  };
}
