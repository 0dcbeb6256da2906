/**
 * Which cells of one (category, period, metric) may be published, decided from their sizes alone.
 *
 * Primary suppression withholds every cell below the publication minimum (`below_minimum`). That alone is not
 * enough: with `all` and some segments published, `all` minus the published segments is the withheld
 * segments' aggregate (sum = mean × n, and the same for counts and histogram buckets). Complementary
 * (secondary) suppression therefore also withholds the smallest published segments (`complementary`) until
 * the businesses not covered by a published segment number at least the minimum, so that the only aggregate
 * a subtraction can reach covers at least `minimum` businesses.
 *
 * Sizes are distinct businesses. A business normally sits in one segment; one reported under two segments
 * is counted in both segments' cells and once in `all`, so `all − Σ published segments` never overstates
 * the businesses outside the published segments: using it is conservative.
 *
 * `all` itself is never withheld for complementary reasons: withholding every segment always leaves
 * `all.n ≥ minimum` businesses outside the published segments, so the loop below always succeeds, and
 * segments (disjoint groups) cannot be subtracted from each other without `all`.
 */

/** Why a cell is not published. Neither reason carries a number: the size of a withheld cell is never shown. */
export type WithheldReason = "below_minimum" | "complementary";

/** The decision for every cell of one (category, period, metric): `null` means published. */
export interface SuppressionDecision {
  /** The `all` cell's fate, or `null` (published) when there is no `all` cell. */
  readonly all: WithheldReason | null;
  /** Each segment's fate, by segment name (`all` excluded). */
  readonly segments: ReadonlyMap<string, WithheldReason | null>;
}

/**
 * Decides publication for the cells of one (category, period, metric) from their sizes: `all` (null when the
 * group has no `all` cell) and each segment's distinct businesses. Deterministic: segments of equal size are
 * withheld in name order.
 */
export function decideSuppression(all: number | null, segments: ReadonlyMap<string, number>, minimum: number): SuppressionDecision {
  const out = new Map<string, WithheldReason | null>();
  const published: { name: string; n: number }[] = [];
  let withheldAny = false;
  for (const [name, n] of segments) {
    if (n < minimum) {
      out.set(name, "below_minimum");
      withheldAny = true;
    } else {
      out.set(name, null);
      published.push({ name, n });
    }
  }
  if (all === null || all < minimum) return { all: all === null ? null : "below_minimum", segments: out };
  // Businesses of `all` outside every published segment (a lower bound when businesses sit in two segments).
  let outside = all;
  for (const p of published) outside -= p.n;
  if (!withheldAny && outside <= 0) return { all: null, segments: out };
  // Something is hidden (a withheld segment, or businesses without a published segment): it must cover the minimum.
  published.sort((a, b) => a.n - b.n || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const p of published) {
    if (outside >= minimum) break;
    out.set(p.name, "complementary");
    outside += p.n;
  }
  return { all: null, segments: out };
}
