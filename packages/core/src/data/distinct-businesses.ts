/**
 * The contract's `sample_size` where one number speaks for several metrics: distinct businesses among the
 * given cells (of one category, segment and period), counted from the business ordinals the import keeps.
 *
 * Callers pass only the cells they publish, so the count is the union of published cells' businesses: it
 * says nothing about withheld cells (see docs/privacy.md, "sample_size of several metrics").
 *
 * Cells of different segments may be counted together too (`privacy/count-basis.ts`): every source numbers its
 * businesses once per (category, period), so one business has one ordinal in every cell of it, and two
 * businesses never share one (imports number them as they read them; the synthetic source segment by segment).
 */
import type { Cell } from "./source.ts";

// Remembered per first cell: the same cells (the same objects while the data is unchanged) give the same count.
const remembered = new WeakMap<Cell, { rest: readonly Cell[]; count: number }[]>();

/** Distinct businesses among `cells`; the largest cell's size when a cell has no identities (data imported before they were kept). */
export function distinctBusinesses(cells: readonly Cell[]): number {
  const first = cells[0];
  if (first === undefined) return 0;
  if (cells.length === 1) return first.sampleSize;
  const rest = cells.slice(1);
  const memo = remembered.get(first);
  const hit = memo?.find((e) => e.rest.length === rest.length && e.rest.every((c, i) => c === rest[i]));
  if (hit) return hit.count;
  const count = countUnion(cells);
  const entries = memo ?? [];
  // A handful of combinations per cell at most (the published metrics of a segment): keep the latest few.
  if (entries.length >= 8) entries.shift();
  entries.push({ rest, count });
  if (!memo) remembered.set(first, entries);
  return count;
}

function countUnion(cells: readonly Cell[]): number {
  let max = 0;
  for (const c of cells) {
    if (c.businesses === undefined) return cells.reduce((m, x) => Math.max(m, x.sampleSize), 0);
    const last = c.businesses[c.businesses.length - 1];
    if (last !== undefined && last + 1 > max) max = last + 1;
  }
  const seen = new Uint8Array(max);
  let count = 0;
  for (const c of cells) {
    for (const b of c.businesses as Uint32Array) {
      if (seen[b] === 0) {
        seen[b] = 1;
        count++;
      }
    }
  }
  return count;
}
