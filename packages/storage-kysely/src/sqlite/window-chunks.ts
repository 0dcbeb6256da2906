/**
 * core's `slidingWindow` over a key's admission log kept in fixed-size chunks, so that an admission costs the
 * same whether the key's window holds ten stamps or a million.
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
export class ChunkedWindow {
  /** Chunks read and unchanged, oldest use first. */
  private readonly clean = new Map<number, number[]>();
  /** Chunks changed since the last flush. */
  private readonly dirty = new Map<number, number[]>();
  private changed = false;
  /** Loaded from an older server's whole log: the key's chunks (if any, from before) are dropped at the flush. */
  private fromLegacy = false;

  private constructor(
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
    if (r === undefined) return new ChunkedWindow(keyId, size, 0, 0, 0);
    if (r.head !== null && r.next !== null && r.stamps.length === 0) return new ChunkedWindow(keyId, size, r.head, r.next, Math.floor(r.head / size));
    // A whole log in `stamps`: written by a server before schema 9 (which never wrote chunks, or wrote this row after them).
    const log = decodeLog(r.stamps);
    const w = new ChunkedWindow(keyId, size, 0, log.length, 0);
    for (let c = 0; c * size < log.length; c++) w.dirty.set(c, Array.from(log.subarray(c * size, (c + 1) * size)));
    w.changed = true;
    w.fromLegacy = true;
    return w;
  }

  /** Chunk `c` (read, and remembered, if it is not in hand; empty if it does not exist yet). */
  private chunk(rows: ChunkRows, c: number): number[] {
    let arr = this.dirty.get(c);
    if (arr !== undefined) return arr;
    arr = this.clean.get(c);
    if (arr !== undefined) {
      // Most recently used last.
      this.clean.delete(c);
      this.clean.set(c, arr);
      return arr;
    }
    const bytes = rows.readChunk(this.keyId, c);
    arr = bytes === undefined ? [] : Array.from(decodeLog(bytes));
    this.clean.set(c, arr);
    if (this.clean.size > CACHED_CHUNKS) this.clean.delete(this.clean.keys().next().value as number);
    return arr;
  }

  /** The stamp at index `i` (head ≤ i < next). */
  private stampAt(rows: ChunkRows, i: number): number {
    const c = Math.floor(i / this.size);
    return this.chunk(rows, c)[i - c * this.size]!;
  }

  private setStamp(rows: ChunkRows, i: number, v: number): void {
    const c = Math.floor(i / this.size);
    const arr = this.chunk(rows, c);
    this.clean.delete(c);
    this.dirty.set(c, arr);
    const at = i - c * this.size;
    // A chunk's stamps before `head` may be gone with an older chunk layout; only `at ≤ length` is ever written.
    if (at === arr.length) arr.push(v);
    else arr[at] = v;
  }

  /** The index of the first stamp newer than `floor` (the log is ascending); `next` when none is. */
  private firstLive(rows: ChunkRows, floor: number): number {
    let i = this.head;
    while (i < this.next) {
      const c = Math.floor(i / this.size);
      const base = c * this.size;
      const arr = this.chunk(rows, c);
      let lo = i - base;
      let hi = Math.min(arr.length, this.next - base);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arr[mid]! <= floor) lo = mid + 1;
        else hi = mid;
      }
      if (lo < Math.min(arr.length, this.next - base)) return base + lo;
      i = base + this.size;
    }
    return this.next;
  }

  /**
   * Decides one request at `now` exactly as core's `slidingWindow` does; `first` is where the live stamps start,
   * for `admit` when the decision is applied.
   */
  decide(rows: ChunkRows, now: number, limit: number, windowMs: number): WindowDecision {
    const first = this.firstLive(rows, now - windowMs);
    const live = this.next - first;
    if (limit <= 0) return { allowed: false, first, live, remaining: 0, resetAt: now + windowMs, retryAfterMs: windowMs };
    if (live < limit) {
      // `now` joins the log; the oldest counted stamp is then the first live one, or `now` (also when the clock stepped back).
      const oldest = live === 0 ? now : Math.min(this.stampAt(rows, first), now);
      return { allowed: true, first, live, remaining: limit - live - 1, resetAt: oldest + windowMs, retryAfterMs: 0 };
    }
    // Full: a slot frees when the (live − limit + 1)-th oldest stamp leaves the window.
    const freesAt = this.stampAt(rows, this.next - limit) + windowMs;
    return { allowed: false, first, live, remaining: 0, resetAt: freesAt, retryAfterMs: Math.max(1, freesAt - now) };
  }

  /** The window as it stands at `now` (nothing admitted): live stamps and the oldest one that counts. */
  peek(rows: ChunkRows, now: number, limit: number, windowMs: number): { live: number; oldest: number } {
    const first = this.firstLive(rows, now - windowMs);
    const live = this.next - first;
    const oldest = live >= limit && limit > 0 ? this.stampAt(rows, this.next - limit) : live > 0 ? this.stampAt(rows, first) : now;
    return { live, oldest };
  }

  /** Applies an admission decided by `decide`: the stamps before `first` leave the log, `now` joins it in order. */
  admit(rows: ChunkRows, first: number, now: number): void {
    this.head = first;
    let at = this.next;
    // A clock that stepped back can leave stamps newer than `now`; keep the log ascending.
    while (at > this.head && this.stampAt(rows, at - 1) > now) at--;
    for (let j = this.next; j > at; j--) this.setStamp(rows, j, this.stampAt(rows, j - 1));
    this.setStamp(rows, at, now);
    this.next += 1;
    this.changed = true;
  }

  /** Writes what the batch changed: the changed chunks, the key's row; deletes chunks wholly behind `head`. */
  flush(rows: ChunkRows): void {
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

/** What `ChunkedWindow.decide` decided: core's SlidingWindowDecision's figures, and where the live stamps start. */
export interface WindowDecision {
  readonly allowed: boolean;
  readonly first: number;
  readonly live: number;
  readonly remaining: number;
  readonly resetAt: number;
  readonly retryAfterMs: number;
}
