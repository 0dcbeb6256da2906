/**
 * A snapshot as an XBRL 2.1 instance document: one duration context for the merchant and period, a `pure`
 * unit for ratios and multiples, an ISO 4217 unit for money, and one fact per metric in the benchdata
 * taxonomy's namespace. Every text and attribute is escaped, so the document is well-formed whatever the
 * merchant identifier holds.
 */
import type { Metric } from "../data/catalog.ts";
import { METRIC_INFO, METRICS } from "../data/catalog.ts";
import { parsePeriod, periodDates } from "../data/period.ts";

/** The benchdata taxonomy's namespace (the `bd` prefix). */
export const XBRL_NAMESPACE = "https://benchdata.dev/xbrl/2026-01-01";
/** Where the taxonomy schema is referenced from (`link:schemaRef`). */
export const XBRL_SCHEMA_URL = `${XBRL_NAMESPACE}/benchdata-2026-01-01.xsd`;
/** The scheme of entity identifiers: the identifier is the account's own merchant id. */
export const XBRL_MERCHANT_SCHEME = "https://benchdata.dev/merchant-id";

/** The taxonomy concept (local name, `bd:` prefix) of each metric. */
export const XBRL_CONCEPTS: { readonly [M in Metric]: string } = {
  gross_margin: "GrossMargin",
  revenue_growth: "RevenueGrowth",
  net_revenue_retention: "NetRevenueRetention",
  customer_ltv: "CustomerLifetimeValue",
  customer_acquisition_cost: "CustomerAcquisitionCost",
  ltv_cac_ratio: "LtvToCacRatio",
  churn_rate: "ChurnRate",
  cart_abandon_rate: "CartAbandonmentRate",
  average_order_value: "AverageOrderValue",
  refund_rate: "RefundRate",
  repeat_purchase_rate: "RepeatPurchaseRate",
  gmv_growth: "GmvGrowth",
  take_rate: "TakeRate",
  burn_multiple: "BurnMultiple",
};

/** What the document is made of. */
export interface XbrlSnapshot {
  readonly id: string;
  readonly merchantId: string;
  readonly category: string;
  readonly segment: string;
  readonly period: string;
  readonly metrics: Readonly<Partial<Record<Metric, number>>>;
}

// Characters XML 1.0 does not allow at all (C0 controls but tab, LF, CR; lone surrogates; U+FFFE, U+FFFF).
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** `text` escaped for XML character data and attribute values; characters XML cannot carry become U+FFFD. */
export function xmlEscape(text: string): string {
  return text.replace(NOT_XML, "\uFFFD").replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

// Comments take no escapes, but may not hold "--" nor end with "-".
function commentText(text: string): string {
  return text.replace(NOT_XML, "\uFFFD").replace(/-(?=-)/g, "- ").replace(/-$/, "- ");
}

/** A finite number as an `xs:decimal` lexical form (no exponent): 1e-7 → "0.0000001", 1e21 → "1000000000000000000000". */
export function decimalText(x: number): string {
  const s = String(x);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m === null) return s;
  const sign = m[1] as string;
  const digits = (m[2] as string) + (m[3] ?? "");
  const point = (m[2] as string).length + Number(m[4]);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Renders the instance document; `currency` is the ISO 4217 code of money metrics (any case). */
export function xbrlInstance(snapshot: XbrlSnapshot, currency: string): string {
  const period = parsePeriod(snapshot.period);
  if (period === null) throw new Error(`xbrlInstance: invalid period ${JSON.stringify(snapshot.period)}`);
  const { start, end } = periodDates(period);
  const code = currency.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) throw new Error(`xbrlInstance: invalid currency ${JSON.stringify(currency)}`);
  const contextId = `c-${snapshot.period}`;
  let facts = "";
  let pure = false;
  let money = false;
  for (const metric of METRICS) {
    const value = snapshot.metrics[metric];
    if (value === undefined || !Number.isFinite(value)) continue;
    const isMoney = METRIC_INFO[metric].unit === "money";
    if (isMoney) money = true;
    else pure = true;
    const text = decimalText(value);
    const dot = text.indexOf(".");
    // `decimals` states the precision the value was submitted with: its digits after the point.
    const decimals = dot < 0 ? 0 : text.length - dot - 1;
    const concept = `bd:${XBRL_CONCEPTS[metric]}`;
    facts += `  <${concept} contextRef="${contextId}" unitRef="${isMoney ? code : "pure"}" decimals="${decimals}">${text}</${concept}>\n`;
  }
  const units =
    (pure ? `  <xbrli:unit id="pure">\n    <xbrli:measure>xbrli:pure</xbrli:measure>\n  </xbrli:unit>\n` : "") +
    (money ? `  <xbrli:unit id="${code}">\n    <xbrli:measure>iso4217:${code}</xbrli:measure>\n  </xbrli:unit>\n` : "");
  const about = `benchdata snapshot ${snapshot.id}: ${snapshot.category}, segment ${snapshot.segment}, ${snapshot.period}`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<!-- ${commentText(about)} -->\n` +
    `<xbrli:xbrl xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:link="http://www.xbrl.org/2003/linkbase" xmlns:xlink="http://www.w3.org/1999/xlink"` +
    ` xmlns:iso4217="http://www.xbrl.org/2003/iso4217" xmlns:bd="${XBRL_NAMESPACE}">\n` +
    `  <link:schemaRef xlink:type="simple" xlink:href="${XBRL_SCHEMA_URL}"/>\n` +
    `  <xbrli:context id="${xmlEscape(contextId)}">\n` +
    `    <xbrli:entity>\n` +
    `      <xbrli:identifier scheme="${XBRL_MERCHANT_SCHEME}">${xmlEscape(snapshot.merchantId)}</xbrli:identifier>\n` +
    `    </xbrli:entity>\n` +
    `    <xbrli:period>\n` +
    `      <xbrli:startDate>${start}</xbrli:startDate>\n` +
    `      <xbrli:endDate>${end}</xbrli:endDate>\n` +
    `    </xbrli:period>\n` +
    `  </xbrli:context>\n` +
    units +
    facts +
    `</xbrli:xbrl>\n`
  );
}
