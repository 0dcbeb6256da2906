/** The benchmark catalogue of the spec: categories, metrics, which category offers which metric. */

/** Every category the service benchmarks. */
export const CATEGORIES = [
  "ecommerce",
  "saas",
  "marketplace",
  "retail",
  "fintech",
  "food_beverage",
  "health_wellness",
] as const;

/** A category value. */
export type Category = (typeof CATEGORIES)[number];

/** Every metric key the service knows. */
export const METRICS = [
  "gross_margin",
  "revenue_growth",
  "net_revenue_retention",
  "customer_ltv",
  "customer_acquisition_cost",
  "ltv_cac_ratio",
  "churn_rate",
  "cart_abandon_rate",
  "average_order_value",
  "refund_rate",
  "repeat_purchase_rate",
  "gmv_growth",
  "take_rate",
  "burn_multiple",
] as const;

/** A metric key. */
export type Metric = (typeof METRICS)[number];

/** Whether a higher value of a metric is better for the business (drives `interpretation`). */
export type MetricDirection = "higher_is_better" | "lower_is_better";

/** What the catalogue knows of one metric. */
export interface MetricInfo {
  readonly key: Metric;
  readonly label: string;
  readonly unit: "ratio" | "money" | "multiple";
  readonly direction: MetricDirection;
  /** The categories that offer it; `"all"` in the spec's table. */
  readonly categories: readonly Category[];
}

const ALL: readonly Category[] = CATEGORIES;

/** The spec's metric table, as data. */
export const METRIC_INFO: { readonly [M in Metric]: MetricInfo } = {
  gross_margin: { key: "gross_margin", label: "Gross margin", unit: "ratio", direction: "higher_is_better", categories: ALL },
  revenue_growth: { key: "revenue_growth", label: "Revenue growth (quarter on quarter)", unit: "ratio", direction: "higher_is_better", categories: ALL },
  net_revenue_retention: { key: "net_revenue_retention", label: "Net revenue retention", unit: "ratio", direction: "higher_is_better", categories: ["saas", "marketplace"] },
  customer_ltv: { key: "customer_ltv", label: "Customer lifetime value", unit: "money", direction: "higher_is_better", categories: ALL },
  customer_acquisition_cost: { key: "customer_acquisition_cost", label: "Customer acquisition cost", unit: "money", direction: "lower_is_better", categories: ALL },
  ltv_cac_ratio: { key: "ltv_cac_ratio", label: "LTV to CAC ratio", unit: "multiple", direction: "higher_is_better", categories: ALL },
  churn_rate: { key: "churn_rate", label: "Churn rate", unit: "ratio", direction: "lower_is_better", categories: ["saas"] },
  cart_abandon_rate: { key: "cart_abandon_rate", label: "Cart abandonment", unit: "ratio", direction: "lower_is_better", categories: ["ecommerce", "marketplace"] },
  average_order_value: { key: "average_order_value", label: "Average order value", unit: "money", direction: "higher_is_better", categories: ["ecommerce", "retail"] },
  refund_rate: { key: "refund_rate", label: "Refund rate", unit: "ratio", direction: "lower_is_better", categories: ["ecommerce", "retail"] },
  repeat_purchase_rate: { key: "repeat_purchase_rate", label: "Repeat purchase rate", unit: "ratio", direction: "higher_is_better", categories: ["ecommerce", "retail", "food_beverage"] },
  gmv_growth: { key: "gmv_growth", label: "GMV growth", unit: "ratio", direction: "higher_is_better", categories: ["marketplace"] },
  take_rate: { key: "take_rate", label: "Take rate", unit: "ratio", direction: "higher_is_better", categories: ["marketplace"] },
  burn_multiple: { key: "burn_multiple", label: "Burn multiple", unit: "multiple", direction: "lower_is_better", categories: ["saas", "fintech"] },
};

const offered = new Map<Category, readonly Metric[]>(
  CATEGORIES.map((c) => [c, METRICS.filter((m) => METRIC_INFO[m].categories.includes(c))]),
);

/** The metrics a category offers, in the catalogue's order. */
export function metricsOf(category: Category): readonly Metric[] {
  return offered.get(category) ?? [];
}

/** Whether `value` is a known category. */
export function isCategory(value: string): value is Category {
  return (CATEGORIES as readonly string[]).includes(value);
}

/** Whether `value` is a known metric key. */
export function isMetric(value: string): value is Metric {
  return (METRICS as readonly string[]).includes(value);
}

/** Whether `category` offers `metric`. */
export function offersMetric(category: Category, metric: Metric): boolean {
  return METRIC_INFO[metric].categories.includes(category);
}
