// The `interpretation` sentence of GET /data/v1/benchmarks/percentile, for every metric of the catalogue:
// acronyms keep their case and the article fits the word ("An LTV…", "A GMV…", "An average…").
import { describe, expect, it } from "vitest";
import { CATEGORIES, METRICS, metricsOf } from "../data/catalog.ts";
import { kit } from "./test-kit.ts";

// Written out by hand (not derived from the catalogue's labels), one per metric: a new metric fails here
// until its sentence has been read by a person.
const HEADS: Record<(typeof METRICS)[number], [value: number, head: string]> = {
  gross_margin: [0.4, "A gross margin of 40% is at percentile "],
  revenue_growth: [0.1, "A revenue growth (quarter on quarter) of 10% is at percentile "],
  net_revenue_retention: [1.1, "A net revenue retention of 110% is at percentile "],
  customer_ltv: [900, "A customer lifetime value of 900 is at percentile "],
  customer_acquisition_cost: [300, "A customer acquisition cost of 300 is at percentile "],
  ltv_cac_ratio: [3, "An LTV to CAC ratio of 3x is at percentile "],
  churn_rate: [0.03, "A churn rate of 3% is at percentile "],
  cart_abandon_rate: [0.7, "A cart abandonment of 70% is at percentile "],
  average_order_value: [80, "An average order value of 80 is at percentile "],
  refund_rate: [0.05, "A refund rate of 5% is at percentile "],
  repeat_purchase_rate: [0.3, "A repeat purchase rate of 30% is at percentile "],
  gmv_growth: [0.1, "A GMV growth of 10% is at percentile "],
  take_rate: [0.12, "A take rate of 12% is at percentile "],
  burn_multiple: [1.5, "A burn multiple of 1.5x is at percentile "],
};

describe("interpretation sentences", () => {
  it("the table above covers the whole catalogue", () => {
    expect(Object.keys(HEADS).sort()).toEqual([...METRICS].sort());
  });

  it("every metric, in every category that offers it, reads as a sentence", async () => {
    const k = kit({ config: { tiers: { enterprise: { perMinute: 100_000 } } } });
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    let checked = 0;
    for (const category of CATEGORIES) {
      for (const metric of metricsOf(category)) {
        const [value, head] = HEADS[metric];
        const r = await k.data(raw, `/benchmarks/percentile?category=${category}&metric=${metric}&value=${value}`);
        expect(r.status, `${category} ${metric}: ${JSON.stringify(r.body)}`).toBe(200);
        const text: string = r.body.interpretation;
        expect(text.startsWith(head), `${category} ${metric}: ${text}`).toBe(true);
        expect(text).toMatch(/ (Higher|Lower) is better for this metric, so it is better than about \d+% of peers: [a-z0-9 %]+\.$/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(METRICS.length);
  });
});
