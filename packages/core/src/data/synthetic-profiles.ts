/** The shapes of the synthetic dataset: per category, its segments and each metric's distribution. */
import type { Category, Metric } from "./catalog.ts";

/**
 * How one metric is drawn, in a "transformed space" where shifts add up:
 * `logit` for ratios in (0, 1), `log` for positive money and multiples, `linear` for growth rates.
 * `centre` is the median in natural units, `spread` the standard deviation in the transformed space,
 * `loading` the correlation with a business's latent quality (negative: better businesses have less).
 */
export interface MetricShape {
  readonly space: "logit" | "log" | "linear";
  readonly centre: number;
  readonly spread: number;
  readonly loading: number;
  /** Share of businesses drawn with three times the spread (fat tails for growth rates). */
  readonly tail?: number;
  /** Lowest value a business can report (growth cannot fall below −100%). */
  readonly floor?: number;
  /** Peak-to-trough amplitude (transformed units) of a yearly cycle peaking in Q4 (retail seasonality). */
  readonly seasonal?: number;
  /** How strongly the shared macro cycle (2021 boom, 2023 slowdown) moves it, in transformed units. */
  readonly macro?: number;
  /** Drift per year in transformed units (zero at the latest period, so history is not flat). */
  readonly trend?: number;
}

/** One segment of a category: its base business count and its shifts (transformed units) per metric. */
export interface SegmentProfile {
  readonly name: string;
  readonly businesses: number;
  readonly shift: Partial<Record<Metric, number>>;
}

/** One category of the synthetic dataset: its segments and the shape of each metric it offers. */
export interface CategoryProfile {
  readonly segments: readonly SegmentProfile[];
  /** Shapes of the offered metrics; `customer_acquisition_cost` is derived as LTV ÷ (LTV:CAC). */
  readonly metrics: Partial<Record<Metric, MetricShape>>;
}

const ratio = (centre: number, spread: number, loading: number, extra: Partial<MetricShape> = {}): MetricShape => ({
  space: "logit",
  centre,
  spread,
  loading,
  ...extra,
});
const positive = (centre: number, spread: number, loading: number, extra: Partial<MetricShape> = {}): MetricShape => ({
  space: "log",
  centre,
  spread,
  loading,
  ...extra,
});
const growth = (centre: number, spread: number, extra: Partial<MetricShape> = {}): MetricShape => ({
  space: "linear",
  centre,
  spread,
  loading: 0.5,
  tail: 0.08,
  floor: -0.6,
  macro: 1,
  ...extra,
});

/** Per-category shapes: medians sit where public benchmarks put them (SaaS gross margin ≈ 0.73, monthly churn 3–7%, NRR ≈ 1.02, LTV:CAC ≈ 3, burn multiple ≈ 1.8, cart abandonment ≈ 0.70, take rate 0.10–0.25). */
export const SYNTHETIC_PROFILES: { readonly [C in Category]: CategoryProfile } = {
  saas: {
    segments: [
      { name: "smb", businesses: 230, shift: { gross_margin: -0.12, revenue_growth: 0.01, net_revenue_retention: -0.06, customer_ltv: -1.4, ltv_cac_ratio: -0.08, churn_rate: 0.32, burn_multiple: 0.06 } },
      { name: "mid_market", businesses: 190, shift: { customer_ltv: 0, churn_rate: -0.05 } },
      { name: "enterprise", businesses: 140, shift: { gross_margin: 0.14, revenue_growth: -0.015, net_revenue_retention: 0.07, customer_ltv: 1.5, ltv_cac_ratio: 0.1, churn_rate: -0.4, burn_multiple: -0.08 } },
    ],
    metrics: {
      gross_margin: ratio(0.73, 0.42, 0.3, { trend: 0.02 }),
      revenue_growth: growth(0.05, 0.085),
      net_revenue_retention: positive(1.03, 0.085, 0.5, { macro: 0.6, floor: 0.5 }),
      customer_ltv: positive(12000, 0.65, 0.3),
      ltv_cac_ratio: positive(3.0, 0.35, 0.4, { macro: 1, trend: -0.015 }),
      churn_rate: ratio(0.045, 0.38, -0.4, { macro: -2 }),
      burn_multiple: positive(1.75, 0.45, -0.5, { macro: -2, trend: -0.012 }),
    },
  },
  ecommerce: {
    segments: [
      { name: "dtc", businesses: 220, shift: { gross_margin: 0.2, average_order_value: 0.15 } },
      { name: "marketplace_seller", businesses: 180, shift: { gross_margin: -0.35, cart_abandon_rate: -0.12, average_order_value: -0.35, refund_rate: 0.15, customer_ltv: -0.2 } },
      { name: "subscription", businesses: 150, shift: { gross_margin: 0.1, cart_abandon_rate: 0.1, repeat_purchase_rate: 0.9, customer_ltv: 0.45, average_order_value: -0.1, ltv_cac_ratio: 0.08 } },
    ],
    metrics: {
      gross_margin: ratio(0.45, 0.4, 0.3),
      revenue_growth: growth(0.03, 0.1, { seasonal: 0.06 }),
      customer_ltv: positive(180, 0.6, 0.3),
      ltv_cac_ratio: positive(2.6, 0.35, 0.4, { macro: 1, trend: -0.015 }),
      cart_abandon_rate: ratio(0.7, 0.35, -0.2, { trend: -0.01 }),
      average_order_value: positive(72, 0.5, 0.1, { trend: 0.03 }),
      refund_rate: ratio(0.08, 0.4, -0.2),
      repeat_purchase_rate: ratio(0.28, 0.4, 0.3),
    },
  },
  marketplace: {
    segments: [
      { name: "consumer_goods", businesses: 200, shift: { take_rate: -0.05 } },
      { name: "b2b", businesses: 150, shift: { take_rate: -0.35, net_revenue_retention: 0.05, customer_ltv: 0.8, cart_abandon_rate: 0.1 } },
      { name: "services", businesses: 170, shift: { take_rate: 0.35, gross_margin: 0.15, cart_abandon_rate: -0.1 } },
    ],
    metrics: {
      gross_margin: ratio(0.62, 0.45, 0.3),
      revenue_growth: growth(0.05, 0.11),
      net_revenue_retention: positive(0.99, 0.1, 0.5, { macro: 0.6, floor: 0.5 }),
      customer_ltv: positive(420, 0.7, 0.3),
      ltv_cac_ratio: positive(3.2, 0.4, 0.4, { macro: 1, trend: -0.015 }),
      cart_abandon_rate: ratio(0.68, 0.35, -0.2),
      gmv_growth: growth(0.055, 0.1),
      take_rate: ratio(0.15, 0.25, 0.1, { trend: 0.01 }),
    },
  },
  retail: {
    segments: [
      { name: "single_store", businesses: 210, shift: { gross_margin: 0.08, revenue_growth: -0.01, average_order_value: -0.15 } },
      { name: "multi_location", businesses: 160, shift: { average_order_value: 0.05 } },
      { name: "omnichannel", businesses: 150, shift: { gross_margin: -0.05, revenue_growth: 0.01, average_order_value: 0.2, refund_rate: 0.2, customer_ltv: 0.2 } },
    ],
    metrics: {
      gross_margin: ratio(0.36, 0.35, 0.3),
      revenue_growth: growth(0.015, 0.07, { seasonal: 0.07 }),
      customer_ltv: positive(220, 0.6, 0.3),
      ltv_cac_ratio: positive(2.8, 0.35, 0.4, { macro: 1, trend: -0.015 }),
      average_order_value: positive(48, 0.5, 0.1, { trend: 0.04 }),
      refund_rate: ratio(0.06, 0.4, -0.2),
      repeat_purchase_rate: ratio(0.35, 0.4, 0.3),
    },
  },
  fintech: {
    segments: [
      { name: "payments", businesses: 190, shift: { gross_margin: -0.1 } },
      { name: "lending", businesses: 140, shift: { gross_margin: -0.3, customer_ltv: 0.4, burn_multiple: 0.15 } },
      { name: "wealth", businesses: 130, shift: { gross_margin: 0.35, customer_ltv: 0.6, revenue_growth: -0.01 } },
      { name: "banking_infrastructure", businesses: 120, shift: { gross_margin: 0.1, customer_ltv: 1.2, burn_multiple: -0.1 } },
    ],
    metrics: {
      gross_margin: ratio(0.55, 0.45, 0.3),
      revenue_growth: growth(0.06, 0.12),
      customer_ltv: positive(950, 0.8, 0.3),
      ltv_cac_ratio: positive(2.9, 0.4, 0.4, { macro: 1, trend: -0.015 }),
      burn_multiple: positive(2.1, 0.5, -0.5, { macro: -3, trend: -0.03 }),
    },
  },
  food_beverage: {
    segments: [
      { name: "restaurant", businesses: 240, shift: { gross_margin: 0.75, customer_ltv: -0.2, repeat_purchase_rate: 0.2 } },
      { name: "packaged_goods", businesses: 170, shift: { gross_margin: -0.1 } },
      { name: "beverage", businesses: 140, shift: { gross_margin: 0.15, revenue_growth: 0.01 } },
    ],
    metrics: {
      gross_margin: ratio(0.4, 0.35, 0.3),
      revenue_growth: growth(0.02, 0.08, { seasonal: 0.03 }),
      customer_ltv: positive(140, 0.6, 0.3),
      ltv_cac_ratio: positive(2.4, 0.35, 0.4, { macro: 1, trend: -0.015 }),
      repeat_purchase_rate: ratio(0.45, 0.4, 0.3),
    },
  },
  health_wellness: {
    segments: [
      { name: "supplements", businesses: 170, shift: { gross_margin: 0.2 } },
      { name: "fitness", businesses: 160, shift: { gross_margin: 0.1, revenue_growth: -0.005 } },
      { name: "telehealth", businesses: 130, shift: { customer_ltv: 0.5, revenue_growth: 0.015, gross_margin: -0.1 } },
      { name: "personal_care", businesses: 150, shift: { gross_margin: -0.15, customer_ltv: -0.3 } },
    ],
    metrics: {
      gross_margin: ratio(0.62, 0.4, 0.3),
      revenue_growth: growth(0.04, 0.09),
      customer_ltv: positive(260, 0.65, 0.3),
      ltv_cac_ratio: positive(2.7, 0.35, 0.4, { macro: 1, trend: -0.015 }),
    },
  },
};
