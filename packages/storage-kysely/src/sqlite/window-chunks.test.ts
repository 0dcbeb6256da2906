import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordAdmission, slidingWindow } from "@benchdata/core";
import { decodeLog, encodeLog } from "./stamp-log.ts";
import type { ChunkRows } from "./window-chunks.ts";
import { ChunkedWindow } from "./window-chunks.ts";

/** The rows of one key in memory, counting the chunk reads and writes. */
function memoryRows(): ChunkRows & { chunks: Map<number, Uint8Array>; key: { head: number | null; next: number | null; stamps: Uint8Array } | undefined; reads: number; writes: number } {
  const rows = {
    chunks: new Map<number, Uint8Array>(),
    key: undefined as { head: number | null; next: number | null; stamps: Uint8Array } | undefined,
    reads: 0,
    writes: 0,
    readKey: () => rows.key,
    readChunk: (_: string, c: number) => {
      rows.reads += 1;
      return rows.chunks.get(c);
    },
    writeChunk: (_: string, c: number, stamps: Uint8Array) => {
      rows.writes += 1;
      rows.chunks.set(c, stamps);
    },
    deleteChunksBelow: (_: string, c: number) => {
      for (const k of [...rows.chunks.keys()]) if (k < c) rows.chunks.delete(k);
    },
    writeKey: (_: string, head: number, next: number) => {
      rows.key = { head, next, stamps: new Uint8Array(0) };
    },
  };
  return rows;
}

/** The log the rows hold (indices head … next − 1). */
function storedLog(rows: ReturnType<typeof memoryRows>, size: number): number[] {
  if (rows.key === undefined) return [];
  const out: number[] = [];
  for (let i = rows.key.head!; i < rows.key.next!; i++) out.push(decodeLog(rows.chunks.get(Math.floor(i / size))!)[i % size]!);
  return out;
}

describe("ChunkedWindow", () => {
  it("as core's slidingWindow's log, decides every request as over a plain array and stores the same log, across chunk boundaries, reloads and clocks that step back", () => {
    const op = fc.record({ dt: fc.integer({ min: -4_000, max: 30_000 }), limit: fc.integer({ min: 0, max: 9 }), flush: fc.boolean(), reload: fc.boolean() });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 80 }), (size, ops) => {
        const rows = memoryRows();
        let w = ChunkedWindow.load(rows, "k", size);
        let log: number[] = [];
        let now = 1_763_000_000_000;
        for (const o of ops) {
          now += o.dt;
          const core = slidingWindow(log, now, o.limit, 60_000);
          const ours = slidingWindow(w, now, o.limit, 60_000);
          expect({ allowed: ours.allowed, remaining: ours.remaining, resetAt: ours.resetAt, retryAfterMs: ours.retryAfterMs }).toEqual({
            allowed: core.allowed,
            remaining: core.remaining,
            resetAt: core.resetAt,
            retryAfterMs: core.retryAfterMs,
          });
          if (core.allowed) {
            recordAdmission(w, ours.first, now);
            log = core.stamps;
          }
          if (o.flush || o.reload) {
            w.flush();
            expect(storedLog(rows, size)).toEqual(log);
            // Only the chunks that still hold live stamps are kept.
            expect(rows.chunks.size).toBeLessThanOrEqual(Math.ceil(log.length / size) + 1);
          }
          if (o.reload) w = ChunkedWindow.load(rows, "k", size);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("reads an older server's whole log and rewrites it as chunks, dropping any chunks from before", () => {
    const rows = memoryRows();
    rows.chunks.set(0, encodeLog([1, 2, 3]));
    const old = [1_763_000_000_000, 1_763_000_001_000, 1_763_000_002_000, 1_763_000_003_000, 1_763_000_004_000];
    rows.key = { head: 0, next: 3, stamps: encodeLog(old) };
    const w = ChunkedWindow.load(rows, "k", 2);
    const d = slidingWindow(w, 1_763_000_060_500, 10, 60_000);
    expect(d).toMatchObject({ allowed: true, remaining: 10 - 4 - 1, resetAt: 1_763_000_001_000 + 60_000 });
    recordAdmission(w, d.first, 1_763_000_060_500);
    w.flush();
    expect(rows.key!.stamps.length).toBe(0);
    expect(storedLog(rows, 2)).toEqual([...old.slice(1), 1_763_000_060_500]);
  });

  it("an admission into a window of 100,000 stamps reads and writes no more than into an empty one", () => {
    const size = 128;
    const costs = (prefill: number): { reads: number; writes: number } => {
      const rows = memoryRows();
      let w = ChunkedWindow.load(rows, "k", size);
      const t0 = 1_763_000_000_000;
      for (let i = 0; i < prefill; i++) {
        const now = t0 + Math.floor((i * 50_000) / Math.max(1, prefill));
        recordAdmission(w, slidingWindow(w, now, 1_000_000, 60_000).first, now);
      }
      w.flush();
      // A fresh load (as after another process wrote), then 1,000 admissions.
      w = ChunkedWindow.load(rows, "k", size);
      rows.reads = 0;
      rows.writes = 0;
      for (let i = 0; i < 1000; i++) {
        const now = t0 + 50_000 + i;
        recordAdmission(w, slidingWindow(w, now, 1_000_000, 60_000).first, now);
        w.flush();
      }
      return { reads: rows.reads, writes: rows.writes };
    };
    const empty = costs(0);
    const full = costs(100_000);
    expect(full.reads).toBeLessThanOrEqual(empty.reads + 2);
    expect(full.writes).toBeLessThanOrEqual(empty.writes + 1);
  });
});
