import { describe, expect, it } from "vitest";
import { createMetricsRegistry } from "./metrics-registry.ts";

describe("metrics registry", () => {
  it("renders counters, gauges and cumulative histograms in the text exposition format, labels escaped", async () => {
    const r = createMetricsRegistry();
    const c = r.counter("x_total", "Things.\nCounted", ["kind"]);
    c.labels('a"b\\c').inc();
    c.labels('a"b\\c').inc(2);
    r.gauge("y", "A level.").labels().set(7);
    const h = r.histogram("z_seconds", "Time.", [0.1, 1], ["route"]).labels("/r");
    h.observe(0.05);
    h.observe(0.1);
    h.observe(0.5);
    h.observe(3);
    let collected = 0;
    r.collect(() => void collected++);
    const text = await r.render();
    expect(collected).toBe(1);
    expect(text).toBe(
      [
        "# HELP x_total Things.\\nCounted",
        "# TYPE x_total counter",
        'x_total{kind="a\\"b\\\\c"} 3',
        "# HELP y A level.",
        "# TYPE y gauge",
        "y 7",
        "# HELP z_seconds Time.",
        "# TYPE z_seconds histogram",
        'z_seconds_bucket{route="/r",le="0.1"} 2',
        'z_seconds_bucket{route="/r",le="1"} 3',
        'z_seconds_bucket{route="/r",le="+Inf"} 4',
        'z_seconds_sum{route="/r"} 3.65',
        'z_seconds_count{route="/r"} 4',
        "",
      ].join("\n"),
    );
    expect(r.value("x_total", { kind: 'a"b\\c' })).toBe(3);
    expect(r.value("z_seconds", { route: "/r" })).toBe(4);
  });

  it("a child is resolved once (the same object), and bad names or label counts are refused", () => {
    const r = createMetricsRegistry();
    const c = r.counter("a_total", "A.", ["x"]);
    expect(c.labels("1")).toBe(c.labels("1"));
    expect(() => c.labels()).toThrow(/label values/);
    expect(() => r.counter("a_total", "again")).toThrow(/already/);
    expect(() => r.counter("bad-name", "B.")).toThrow(/invalid metric name/);
    expect(() => r.histogram("h", "H.", [1, 1])).toThrow(/ascend/);
  });
});
