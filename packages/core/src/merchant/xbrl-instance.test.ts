import { describe, expect, it } from "vitest";
import type { XmlElement } from "./well-formed-xml.ts";
import { wellFormedXml } from "./well-formed-xml.ts";
import { decimalText, XBRL_MERCHANT_SCHEME, XBRL_NAMESPACE, XBRL_SCHEMA_URL, xbrlInstance, xmlEscape } from "./xbrl-instance.ts";

const snapshot = {
  id: "vcfs_01JD0000000000000000000000",
  merchantId: "m-42",
  category: "ecommerce",
  segment: "dtc",
  period: "2026-Q3",
  metrics: { gross_margin: 0.4412, average_order_value: 87.5, customer_ltv: 1200, refund_rate: 0.031, ltv_cac_ratio: 3.2 },
};

function parse(xml: string): XmlElement {
  const check = wellFormedXml(xml);
  if (!check.ok) throw new Error(check.error);
  return check.root;
}

const child = (e: XmlElement, name: string): XmlElement => {
  const found = e.children.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no <${name}> in <${e.name}>`);
  return found;
};

describe("xbrlInstance", () => {
  it("is a well-formed XBRL 2.1 instance: root, schemaRef, one context with the merchant and the period, units, one fact per metric", () => {
    const xml = xbrlInstance(snapshot, "usd");
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    const root = parse(xml);
    expect(root.name).toBe("xbrli:xbrl");
    expect(root.attributes).toMatchObject({ "xmlns:xbrli": "http://www.xbrl.org/2003/instance", "xmlns:bd": XBRL_NAMESPACE, "xmlns:iso4217": "http://www.xbrl.org/2003/iso4217" });
    // The schemaRef comes first, as XBRL 2.1 requires.
    expect(root.children[0]).toEqual({ name: "link:schemaRef", attributes: { "xlink:type": "simple", "xlink:href": XBRL_SCHEMA_URL }, children: [], text: "" });
    const contexts = root.children.filter((c) => c.name === "xbrli:context");
    expect(contexts).toHaveLength(1);
    const context = contexts[0]!;
    const identifier = child(child(context, "xbrli:entity"), "xbrli:identifier");
    expect([identifier.attributes.scheme, identifier.text]).toEqual([XBRL_MERCHANT_SCHEME, "m-42"]);
    const period = child(context, "xbrli:period");
    expect([child(period, "xbrli:startDate").text, child(period, "xbrli:endDate").text]).toEqual(["2026-07-01", "2026-09-30"]);
    const units = Object.fromEntries(root.children.filter((c) => c.name === "xbrli:unit").map((u) => [u.attributes.id, child(u, "xbrli:measure").text]));
    expect(units).toEqual({ pure: "xbrli:pure", USD: "iso4217:USD" });
    const facts = root.children.filter((c) => c.name.startsWith("bd:"));
    expect(facts.map((f) => [f.name, f.attributes.unitRef, f.attributes.decimals, f.text])).toEqual([
      ["bd:GrossMargin", "pure", "4", "0.4412"],
      ["bd:CustomerLifetimeValue", "USD", "0", "1200"],
      ["bd:LtvToCacRatio", "pure", "1", "3.2"],
      ["bd:AverageOrderValue", "USD", "1", "87.5"],
      ["bd:RefundRate", "pure", "3", "0.031"],
    ]);
    for (const f of facts) expect(f.attributes.contextRef).toBe(context.attributes.id);
  });

  it("a monthly snapshot gets that month's dates; a snapshot of ratios only has no currency unit", () => {
    const root = parse(xbrlInstance({ ...snapshot, period: "2024-02", metrics: { churn_rate: 0.02 } }, "eur"));
    const period = child(child(root, "xbrli:context"), "xbrli:period");
    expect([child(period, "xbrli:startDate").text, child(period, "xbrli:endDate").text]).toEqual(["2024-02-01", "2024-02-29"]);
    expect(root.children.filter((c) => c.name === "xbrli:unit").map((u) => u.attributes.id)).toEqual(["pure"]);
  });

  it("escapes the merchant id: markup, quotes, ampersands and characters XML cannot carry stay well-formed", () => {
    const nasty = `</xbrli:identifier><x a="1"> & 'q' "d" ]]> --> \u0001`;
    const xml = xbrlInstance({ ...snapshot, merchantId: nasty, segment: "a--b-" }, "usd");
    const root = parse(xml);
    const identifier = child(child(child(root, "xbrli:context"), "xbrli:entity"), "xbrli:identifier");
    expect(identifier.text).toBe(nasty.replace("\u0001", "\uFFFD"));
    expect(root.children.filter((c) => c.name.startsWith("bd:"))).toHaveLength(5);
  });

  it("numbers are xs:decimal without exponents, negative values included", () => {
    expect([1e-7, 1.5e-7, -2.5e-8, 1e21, 1.2345e22, 0.1, -3, 0, 123.456].map(decimalText)).toEqual([
      "0.0000001",
      "0.00000015",
      "-0.000000025",
      "1000000000000000000000",
      "12345000000000000000000",
      "0.1",
      "-3",
      "0",
      "123.456",
    ]);
    const root = parse(xbrlInstance({ ...snapshot, metrics: { revenue_growth: -1.5e-7 } }, "usd"));
    const fact = child(root, "bd:RevenueGrowth");
    expect([fact.text, fact.attributes.decimals]).toEqual(["-0.00000015", "8"]);
  });

  it("xmlEscape escapes the five special characters", () => {
    expect(xmlEscape(`<a href="x">&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  });
});

describe("wellFormedXml (the checker the XBRL tests rely on)", () => {
  it("accepts well-formed documents and decodes entities", () => {
    const check = wellFormedXml(`<?xml version="1.0" encoding="UTF-8"?>\n<!-- c --><a:r xmlns:a="urn:a" x='1'><a:b y="&lt;&#65;&#x42;"/>t&amp;u<![CDATA[<raw>]]></a:r>\n`);
    expect(check).toEqual({
      ok: true,
      root: { name: "a:r", attributes: { "xmlns:a": "urn:a", x: "1" }, children: [{ name: "a:b", attributes: { y: "<AB" }, children: [], text: "" }], text: "t&u<raw>" },
    });
  });

  it("refuses what is not well-formed", () => {
    for (const bad of [
      "<a><b></a></b>",
      "<a>",
      "<a></a><b/>",
      "text<a/>",
      "<a>x & y</a>",
      "<a>&nbsp;</a>",
      '<a x="1" x="2"/>',
      "<a x=1/>",
      '<a x="<"/>',
      "<a><!-- a -- b --></a>",
      "<p:a/>",
      '<a p:x="1"/>',
      "<!DOCTYPE a><a/>",
      "<a>]]></a>",
      "<a>\u0001</a>",
      "<a/><?xml version=\"1.0\"?>",
      "",
    ]) {
      expect(wellFormedXml(bad).ok, JSON.stringify(bad)).toBe(false);
    }
  });
});
