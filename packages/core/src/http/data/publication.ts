/**
 * Whether a cell may be published: the one place every data endpoint asks, so that primary and complementary
 * suppression (`privacy/suppression.ts`) apply identically everywhere.
 *
 * Cost: a cell below the minimum needs nothing beyond its own size. Any other cell needs its group (every
 * segment's cell of the same category, period and metric, and `all`): `all` too can be withheld for
 * complementary reasons. The decision is remembered on the Cell object together with the `all` Cell it was
 * made against, so a repeated request costs a WeakMap read (and, for a segment, one `all` lookup). Sources
 * hand out the same Cell object while its data is unchanged, and an import replaces every cell of a
 * (category, period) at once (a new `all` among them), so a remembered decision is never used against
 * different data.
 */
import type { Category, Metric } from "../../data/catalog.ts";
import { metricsOf } from "../../data/catalog.ts";
import { distinctBusinesses } from "../../data/distinct-businesses.ts";
import type { BenchmarkSource, Cell } from "../../data/source.ts";
import { ALL_SEGMENTS } from "../../data/source.ts";
import type { MetricCells } from "../../privacy/count-basis.ts";
import { countBasis } from "../../privacy/count-basis.ts";
import type { WithheldReason } from "../../privacy/suppression.ts";
import { combinedReason, decideSuppression } from "../../privacy/suppression.ts";

interface Remembered {
  readonly all: Cell | undefined;
  readonly minimum: number;
  readonly reason: WithheldReason | null;
}

const remembered = new WeakMap<Cell, Remembered>();

/** Every cell of one (category, period, metric) and the decision for each (segments in the source's order). */
export type CellGroup = MetricCells;

/** Reads and decides the whole group of (category, period, metric), remembering each cell's decision. */
export async function cellGroup(source: BenchmarkSource, category: Category, period: string, metric: Metric, minimum: number, names?: readonly string[]): Promise<CellGroup> {
  const groups = await periodGroups(source, category, period, minimum, names);
  return groups.get(metric) ?? { all: undefined, allReason: null, segments: new Map(), reasons: new Map() };
}

/** The groups of every metric of one (category, period), each decided on its own, with one read per segment. */
export async function periodGroups(source: BenchmarkSource, category: Category, period: string, minimum: number, names?: readonly string[]): Promise<Map<Metric, CellGroup>> {
  const metrics = metricsOf(category);
  const segmentNames = names ?? (await source.segments(category));
  const found = await Promise.all([ALL_SEGMENTS, ...segmentNames].map((s) => source.cells(category, s, period, metrics)));
  const groups = new Map<Metric, CellGroup>();
  for (const metric of metrics) {
    const all = found[0]?.get(metric);
    const segments = new Map<string, Cell>();
    segmentNames.forEach((s, i) => {
      const c = found[i + 1]?.get(metric);
      if (c !== undefined) segments.set(s, c);
    });
    if (all === undefined && segments.size === 0) continue;
    const sizes = new Map<string, number>();
    for (const [s, c] of segments) sizes.set(s, c.sampleSize);
    const overlaps = overlapping(all, segments);
    const d = decideSuppression(all === undefined ? null : all.sampleSize, sizes, minimum, { overlapping: overlaps, share: overlaps ? sharing(all, segments) : undefined });
    if (all !== undefined) remembered.set(all, { all, minimum, reason: d.all });
    for (const [s, c] of segments) remembered.set(c, { all, minimum, reason: d.segments.get(s) ?? null });
    groups.set(metric, { all, segments, allReason: d.all, reasons: d.segments });
  }
  return groups;
}

/**
 * Why a group with nothing published is refused as a whole: the reason of its `all` cell, which such a refusal
 * names and which every other endpoint gives for that cell; without an `all` cell, the segments' combined reason.
 */
export function groupRefusal(group: CellGroup): WithheldReason {
  if (group.all !== undefined && group.allReason !== null) return group.allReason;
  return combinedReason([...group.reasons.values()].filter((r): r is WithheldReason => r !== null));
}

/**
 * Which pairs of segments' cells share a business, from the identities (one pass over them). Without identities
 * (cells published before they were kept), any two segments may share when the segments add up to more than `all`.
 */
function sharing(all: Cell | undefined, segments: ReadonlyMap<string, Cell>): (a: string, b: string) => boolean {
  const cells = [...segments];
  if (!cells.every(([, c]) => c.businesses !== undefined)) {
    const total = cells.reduce((t, [, c]) => t + c.sampleSize, 0);
    const may = all !== undefined && total > all.sampleSize;
    return () => may;
  }
  const owners = new Map<number, string[]>();
  const pairs = new Set<string>();
  for (const [name, c] of cells) {
    for (const b of c.businesses as Uint32Array) {
      const earlier = owners.get(b);
      if (earlier === undefined) owners.set(b, [name]);
      else {
        for (const other of earlier) pairs.add(other < name ? `${other}\u0000${name}` : `${name}\u0000${other}`);
        earlier.push(name);
      }
    }
  }
  return (a, b) => pairs.has(a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
}

/** Whether some business is counted in two of the segments' cells (from the identities; else from the sizes). */
function overlapping(all: Cell | undefined, segments: ReadonlyMap<string, Cell>): boolean {
  const cells = [...segments.values()];
  const total = cells.reduce((t, c) => t + c.sampleSize, 0);
  if (cells.every((c) => c.businesses !== undefined)) return distinctBusinesses(cells) < total;
  return all !== undefined && total > all.sampleSize;
}

/**
 * Why `cell` (the cell of `segment` for `metric` in `period`) is withheld, or null when it is published.
 * `all` is the group's `all` cell when the caller has it already (else it is read when needed).
 */
export async function withheldReason(source: BenchmarkSource, category: Category, segment: string, period: string, metric: Metric, cell: Cell, minimum: number): Promise<WithheldReason | null> {
  if (cell.sampleSize < minimum) return "below_minimum";
  if (segment === ALL_SEGMENTS) {
    // The hot path (every request for `all`): a remembered decision is read without another await.
    const r = remembered.get(cell);
    if (r !== undefined && r.all === cell && r.minimum === minimum) return r.reason;
    return reasonAgainst(source, category, segment, period, metric, cell, cell, minimum);
  }
  const all = (await source.cells(category, ALL_SEGMENTS, period, [metric])).get(metric);
  return reasonAgainst(source, category, segment, period, metric, cell, all, minimum);
}

/** Like `withheldReason` for several metrics of one segment and period (one read of the `all` cells, one group read at most). */
export async function withheldReasons(source: BenchmarkSource, category: Category, segment: string, period: string, cells: ReadonlyMap<Metric, Cell>, minimum: number): Promise<Map<Metric, WithheldReason | null>> {
  const out = new Map<Metric, WithheldReason | null>();
  const pending: Metric[] = [];
  for (const [m, c] of cells) {
    if (c.sampleSize < minimum) out.set(m, "below_minimum");
    else pending.push(m);
  }
  if (pending.length === 0) return out;
  const alls = segment === ALL_SEGMENTS ? cells : await source.cells(category, ALL_SEGMENTS, period, pending);
  const unknown: Metric[] = [];
  for (const m of pending) {
    const r = remembered.get(cells.get(m) as Cell);
    if (r !== undefined && r.all === alls.get(m) && r.minimum === minimum) out.set(m, r.reason);
    else unknown.push(m);
  }
  if (unknown.length === 0) return out;
  const groups = await groupsWith(source, category, period, segment, minimum);
  for (const m of unknown) out.set(m, reasonIn(groups.get(m), segment));
  return out;
}

/** The period's groups, read and decided afresh, with `segment` among them even if the source does not list it. */
async function groupsWith(source: BenchmarkSource, category: Category, period: string, segment: string, minimum: number): Promise<Map<Metric, CellGroup>> {
  const names = await source.segments(category);
  return periodGroups(source, category, period, minimum, segment === ALL_SEGMENTS || names.includes(segment) ? names : [...names, segment]);
}

/** `segment`'s fate in `group`, by name: the group read may return other objects than the caller's (an uncached source). */
function reasonIn(group: CellGroup | undefined, segment: string): WithheldReason | null {
  if (group === undefined) return null;
  return segment === ALL_SEGMENTS ? group.allReason : (group.reasons.get(segment) ?? null);
}

/** The decision for `cell` (at least the minimum) in its group, whose `all` cell is `all`. */
async function reasonAgainst(source: BenchmarkSource, category: Category, segment: string, period: string, metric: Metric, cell: Cell, all: Cell | undefined, minimum: number): Promise<WithheldReason | null> {
  const r = remembered.get(cell);
  if (r !== undefined && r.all === all && r.minimum === minimum) return r.reason;
  return reasonIn((await groupsWith(source, category, period, segment, minimum)).get(metric), segment);
}

const rememberedBases = new WeakMap<Cell, { readonly alls: readonly (Cell | undefined)[]; readonly minimum: number; readonly basis: ReadonlySet<Metric> }>();

/**
 * The metrics a multi-metric `sample_size` of (category, period) may count together (`privacy/count-basis.ts`).
 * Needs every cell of the period (one read per segment); the result is remembered against its `all` cells
 * (replaced together with the segments' cells by an import), so a repeated request reads only the `all` cells.
 */
export async function countBasisOf(source: BenchmarkSource, category: Category, period: string, minimum: number): Promise<ReadonlySet<Metric>> {
  const metrics = metricsOf(category);
  const found = await source.cells(category, ALL_SEGMENTS, period, metrics);
  const alls = metrics.map((m) => found.get(m));
  const key = alls.find((c) => c !== undefined);
  if (key === undefined) return new Set();
  const r = rememberedBases.get(key);
  if (r !== undefined && r.minimum === minimum && r.alls.every((c, i) => c === alls[i])) return r.basis;
  const basis = countBasis(await periodGroups(source, category, period, minimum), minimum);
  rememberedBases.set(key, { alls, minimum, basis });
  return basis;
}
