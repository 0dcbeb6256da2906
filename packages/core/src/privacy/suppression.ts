/**
 * Which cells of one (category, period, metric) may be published, decided from their sizes alone.
 *
 * Primary suppression withholds every cell below the publication minimum (`below_minimum`). That alone is not
 * enough: with `all` and some segments published, `all` minus the published segments is the withheld
 * segments' aggregate (sum = mean × n, and the same for counts and histogram buckets). Complementary
 * (secondary) suppression therefore also withholds published segments (`complementary`), so that what a
 * subtraction reaches covers at least `minimum` businesses, and so that it does not narrow the size of a
 * cell below the minimum either. The reason codes are public, and a `complementary` cell has at least the
 * minimum of businesses (else it would be `below_minimum`), so an attacker holding `hidden` (`all` minus the
 * published segments), k complementary and b below-minimum cells knows that each below-minimum cell holds at
 * most `hidden − k × minimum − (b − 1)`, and, when k is 0, at least `hidden − (b − 1) × (minimum − 1)`.
 * Segments are withheld until those bounds say no more than the reason code (1 to minimum − 1), or, when
 * nothing is below the minimum, until `hidden` reaches the minimum:
 *
 * - in **name order**, never by size: choosing the smallest first (as this did) told that a complementary
 *   cell was no larger than the smallest published one, which with `hidden` pinned the cell below the
 *   minimum (30 and 30 and 5: the second 30 published, so the first was 30, so the withheld one was 5);
 * - if no choice of segments is enough, `all` is withheld too (`complementary`), and the segments stay as
 *   chosen: publishing them again would make `all`'s fate depend on the small cell's size, and so tell it.
 *
 * What an attacker who knows this rule can still learn is docs/privacy.md's "What remains possible": the top
 * of a withheld cell's range, and, when `all` is withheld too, that the category is small.
 *
 * Sizes are distinct businesses. A business normally sits in one segment; one reported under two segments
 * is counted in both segments' cells and once in `all`, so `all − Σ published segments` nets it out: a
 * negative difference isolates the businesses counted twice (59 − 30 − 30 gives one business's value), and
 * with any business counted twice a difference of 0 may hide one in no segment. Neither is accepted then.
 */

/** Why a cell is not published. Neither reason carries a number: the size of a withheld cell is never shown. */
export type WithheldReason = "below_minimum" | "complementary";

/**
 * The one reason of a refusal that covers several withheld cells (a segment's metrics in `/benchmarks` and
 * `/segments`, a merchant snapshot's metrics): `below_minimum` when every one of them is below the minimum, else
 * `complementary` (some cell meets the minimum, so "too few businesses" would be false). Each cell's own reason is
 * public (`/benchmarks/percentile` gives it), so a function of them tells nothing more.
 */
export function combinedReason(reasons: Iterable<WithheldReason>): WithheldReason {
  for (const r of reasons) if (r !== "below_minimum") return "complementary";
  return "below_minimum";
}

/** The decision for every cell of one (category, period, metric): `null` means published. */
export interface SuppressionDecision {
  /** The `all` cell's fate, or `null` (published) when there is no `all` cell. */
  readonly all: WithheldReason | null;
  /** Each segment's fate, by segment name (`all` excluded). */
  readonly segments: ReadonlyMap<string, WithheldReason | null>;
}

/** What else a group's decision must take into account. */
export interface SuppressionOptions {
  /**
   * Some business is counted in two segments of the group. `all − Σ published` then nets such businesses out
   * (it can be 0 or negative with businesses still hidden, and a negative one isolates those counted twice),
   * so it must reach the minimum: never 0 or below.
   */
  readonly overlapping?: boolean;
  /**
   * Whether two segments share a business. Two published segments that share businesses can be subtracted from
   * each other (s2 = s1 plus a few gives the few: their size, sum and values), so of segments that share, at
   * most one is published.
   */
  readonly share?: (a: string, b: string) => boolean;
}

/**
 * Decides publication for the cells of one (category, period, metric) from their sizes: `all` (null when the
 * group has no `all` cell) and each segment's distinct businesses. Deterministic, and the same whatever order
 * the segments are given in.
 */
export function decideSuppression(all: number | null, segments: ReadonlyMap<string, number>, minimum: number, options: SuppressionOptions = {}): SuppressionDecision {
  const out = new Map<string, WithheldReason | null>();
  let published: { name: string; n: number }[] = [];
  let below = 0;
  for (const [name, n] of segments) {
    if (n < minimum) {
      out.set(name, "below_minimum");
      below++;
    } else {
      out.set(name, null);
      published.push({ name, n });
    }
  }
  published.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let complementary = 0;
  // Published segments must not share a business: in name order, one that shares with a segment kept before it
  // is withheld. It counts as complementary in the bounds below, as if all its businesses were hidden (stricter).
  const share = options.share;
  if (share !== undefined) {
    const kept: { name: string; n: number }[] = [];
    for (const p of published) {
      if (kept.some((k) => share(k.name, p.name))) {
        out.set(p.name, "complementary");
        complementary++;
      } else kept.push(p);
    }
    published = kept;
  }
  if (all === null || all < minimum) return { all: all === null ? null : "below_minimum", segments: out };
  // Businesses of `all` outside every published segment (net of those counted in two segments).
  let hidden = all;
  for (const p of published) hidden -= p.n;
  const withhold = (p: { name: string; n: number }): void => {
    out.set(p.name, "complementary");
    hidden += p.n;
    complementary++;
  };
  if (below === 0 && complementary === 0 && hidden === 0 && !options.overlapping) return { all: null, segments: out };
  // What the attacker can tell about one cell below the minimum: the others hold at least 1 each, and each
  // complementary cell at least the minimum (and, with none, the others at most minimum − 1 each).
  const enough = (): boolean => {
    if (hidden < minimum) return false;
    if (below === 0) return true;
    const most = hidden - complementary * minimum - (below - 1);
    const least = complementary > 0 ? 1 : hidden - (below - 1) * (minimum - 1);
    return most >= minimum - 1 && least <= 1;
  };
  for (const p of published) {
    if (enough()) break;
    withhold(p);
  }
  return { all: enough() ? null : "complementary", segments: out };
}
