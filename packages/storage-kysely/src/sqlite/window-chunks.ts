/**
 * A key's admission log kept in fixed-size chunks, so that an admission costs the same whether the key's window
 * holds ten stamps or a million. It is a `MutableWindowLog`: core's `slidingWindow` decides over it and core's
 * `recordAdmission` applies an admission through it; this file only stores.
 *
 * The log. Each stamp the key ever admitted has an index (0, 1, 2, …, in stamp order); the log core's
 * `slidingWindow` would store is the stamps at indices `head` … `next − 1`. Stamp `i` lives in chunk
 * `⌊i / size⌋` at position `i mod size`; every chunk before the last is full. A row per key holds `head` and
 * `next`; a row per chunk holds the chunk's stamps (stamp-log.ts's stored form, about 2 bytes a stamp).
 *
 * An admission reads at most: the chunk holding `head` (where the search for the first live stamp starts; it
 * moves to the next chunk only past whole expired chunks, each passed once), the chunk holding the
 * `limit`-th newest stamp (only when the window is full: it is the exact moment a slot frees), and the last
 * chunk (to append `now`). It writes the last chunk, the key's row, and deletes whole chunks that fell
 * behind `head`. None of this depends on how many stamps the window holds. A clock that stepped back inserts
 * `now` in order, shifting the stamps after it: that costs the stamps it passes, as in core.
 *
 * Chunks are remembered (see admission-memo.ts), a few per key, so a busy key's admissions read nothing.
 */
import type { MutableWindowLog } from "@benchdata/core";
import { firstAfterIn } from "@benchdata/core";
import { decodeLog, encodeLog } from "./stamp-log.ts";

/** Stamps per chunk (default): a chunk's stored form stays under about 260 bytes. */
export const WINDOW_CHUNK_SIZE = 128;
/** Chunks a key keeps in memory between batches (its first live chunk, its last, and the one a refusal reads). */
const CACHED_CHUNKS = 3;

/** Where a key's log and chunks are read and written (the SQLite statements). */
export interface ChunkRows {
  /** The key's row: `head`/`next` and an empty `stamps`, or an older server's whole log in `stamps`; undefined when none. */
  readKey(keyId: string): { head: number | null; next: number | null; stamps: Uint8Array } | undefined;
  readChunk(keyId: string, chunk: number): Uint8Array | undefined;
  writeChunk(keyId: string, chunk: number, stamps: Uint8Array): void;
  /** Deletes the key's chunks numbered below `chunk`. */
  deleteChunksBelow(keyId: string, chunk: number): void;
  writeKey(keyId: string, head: number, next: number): void;
}

/** One key's log as stored (plus the changes of the batch in flight, until `flush`). */
export class ChunkedWindow implements MutableWindowLog {
  /** Chunks read and unchanged, oldest use first. */
  private readonly clean = new Map<number, number[]>();
  /** Chunks changed since the last flush. */
  private readonly dirty = new Map<number, number[]>();
  private changed = false;
  /** Loaded from an older server's whole log: the key's chunks (if any, from before) are dropped at the flush. */
  private fromLegacy = false;

  private constructor(
    private readonly rows: ChunkRows,
    readonly keyId: string,
    private readonly size: number,
    private head: number,
    private next: number,
    /** Chunks below this one's number are deleted (or never existed). */
    private keptFrom: number,
  ) {}

  /** The key's log as stored (an older server's whole-log row is split into chunks, written at the next flush). */
  static load(rows: ChunkRows, keyId: string, size: number): ChunkedWindow {
    const r = rows.readKey(keyId);
    if (r === undefined) return new ChunkedWindow(rows, keyId, size, 0, 0, 0);
    if (r.head !== null && r.next !== null && r.stamps.length === 0) return new ChunkedWindow(rows, keyId, size, r.head, r.next, Math.floor(r.head / size));
    // A whole log in `stamps`: written by a server before schema 9 (which never wrote chunks, or wrote this row after them).
    const log = decodeLog(r.stamps);
    const w = new ChunkedWindow(rows, keyId, size, 0, log.length, 0);
    for (let c = 0; c * size < log.length; c++) w.dirty.set(c, Array.from(log.subarray(c * size, (c + 1) * size)));
    w.changed = true;
    w.fromLegacy = true;
    return w;
  }

  /** Chunk `c` (read, and remembered, if it is not in hand; empty if it does not exist yet). */
  private chunk(c: number): number[] {
    let arr = this.dirty.get(c);
    if (arr !== undefined) return arr;
    arr = this.clean.get(c);
    if (arr !== undefined) {
      // Most recently used last.
      this.clean.delete(c);
      this.clean.set(c, arr);
      return arr;
    }
    const bytes = this.rows.readChunk(this.keyId, c);
    arr = bytes === undefined ? [] : Array.from(decodeLog(bytes));
    this.clean.set(c, arr);
    if (this.clean.size > CACHED_CHUNKS) this.clean.delete(this.clean.keys().next().value as number);
    return arr;
  }

  get end(): number {
    return this.next;
  }

  /** The stamp at index `i` (head ≤ i < next). */
  stampAt(i: number): number {
    const c = Math.floor(i / this.size);
    return this.chunk(c)[i - c * this.size]!;
  }

  /** Stores stamp `i`; `i === next` appends. */
  setStamp(i: number, v: number): void {
    const c = Math.floor(i / this.size);
    const arr = this.chunk(c);
    this.clean.delete(c);
    this.dirty.set(c, arr);
    const at = i - c * this.size;
    // A chunk's stamps before `head` may be gone with an older chunk layout; only `at ≤ length` is ever written.
    if (at === arr.length) arr.push(v);
    else arr[at] = v;
    if (i === this.next) this.next += 1;
    this.changed = true;
  }

  dropBefore(first: number): void {
    this.head = first;
    this.changed = true;
  }

  /**
   * The index of the first stamp newer than `floor` (the log is ascending); `next` when none is. It starts at
   * `head` and moves to a later chunk only past a whole expired one, so each chunk is passed once.
   */
  firstAfter(floor: number): number {
    let i = this.head;
    while (i < this.next) {
      const c = Math.floor(i / this.size);
      const base = c * this.size;
      const arr = this.chunk(c);
      const to = Math.min(arr.length, this.next - base);
      const at = firstAfterIn(arr, i - base, to, floor);
      if (at < to) return base + at;
      i = base + this.size;
    }
    return this.next;
  }

  /** Writes what the batch changed: the changed chunks, the key's row; deletes chunks wholly behind `head`. */
  flush(): void {
    const rows = this.rows;
    if (!this.changed) return;
    const headChunk = Math.floor(this.head / this.size);
    if (this.fromLegacy) {
      rows.deleteChunksBelow(this.keyId, Number.MAX_SAFE_INTEGER);
      this.fromLegacy = false;
    }
    for (const [c, arr] of this.dirty) {
      if (c >= headChunk) {
        rows.writeChunk(this.keyId, c, encodeLog(arr));
        this.clean.set(c, arr);
      }
    }
    this.dirty.clear();
    if (headChunk > this.keptFrom) {
      rows.deleteChunksBelow(this.keyId, headChunk);
      this.keptFrom = headChunk;
    }
    for (const c of this.clean.keys()) if (c < headChunk) this.clean.delete(c);
    while (this.clean.size > CACHED_CHUNKS) this.clean.delete(this.clean.keys().next().value as number);
    rows.writeKey(this.keyId, this.head, this.next);
    this.changed = false;
  }
}
