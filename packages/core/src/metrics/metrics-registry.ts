/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text exposition
 * format (version 0.0.4). Runtime-agnostic (no `process`, no timers), unlike prom-client, which reads Node's
 * process and cluster state. Cheap where it is hot: a labelled child is resolved once (`labels(…)` at setup) and
 * then updated with a number addition; nothing is allocated per update.
 */

/** A counter's child for one set of label values. */
export interface CounterChild {
  inc(by?: number): void;
  readonly value: number;
}

/** A gauge's child for one set of label values. */
export interface GaugeChild {
  set(value: number): void;
  readonly value: number;
}

/** A histogram's child for one set of label values. */
export interface HistogramChild {
  observe(value: number): void;
  readonly count: number;
  readonly sum: number;
}

/** A metric family with labels; `labels(…)` returns the child of those values (the same one every time). */
export interface Family<C> {
  readonly name: string;
  labels(...values: string[]): C;
}

/** Runs before each render, e.g. to read gauges from storage. */
export type Collector = () => Promise<void> | void;

/** The registry every metric of an app lives in, rendered at `GET /metrics`. */
export interface MetricsRegistry {
  counter(name: string, help: string, labelNames?: readonly string[]): Family<CounterChild>;
  gauge(name: string, help: string, labelNames?: readonly string[]): Family<GaugeChild>;
  /** `buckets`: upper bounds, ascending (`+Inf` is added). */
  histogram(name: string, help: string, buckets: readonly number[], labelNames?: readonly string[]): Family<HistogramChild>;
  /** Adds a collector run before each render. */
  collect(collector: Collector): void;
  /** Runs the collectors, then renders every metric in the text exposition format. */
  render(): Promise<string>;
  /** The value of a counter or gauge child, or a histogram child's count (for tests and embedders); undefined when absent. */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
}

/** The Content-Type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

interface Entry {
  readonly type: "counter" | "gauge" | "histogram";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly children: Map<string, { labels: readonly string[]; child: unknown }>;
  readonly buckets?: readonly number[];
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? "")}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

class Counter implements CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

class Gauge implements GaugeChild {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
}

class Histogram implements HistogramChild {
  count = 0;
  sum = 0;
  readonly counts: Float64Array;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.count++;
    this.sum += value;
  }
}

/** A new, empty registry. */
export function createMetricsRegistry(): MetricsRegistry {
  const entries = new Map<string, Entry>();
  const collectors: Collector[] = [];

  function family<C>(type: Entry["type"], name: string, help: string, labelNames: readonly string[], make: () => C, buckets?: readonly number[]): Family<C> {
    if (!NAME.test(name)) throw new Error(`invalid metric name ${name}`);
    for (const l of labelNames) if (!LABEL.test(l) || l === "le") throw new Error(`invalid label name ${l} of ${name}`);
    if (entries.has(name)) throw new Error(`metric ${name} is already registered`);
    const entry: Entry = { type, name, help, labelNames, children: new Map(), ...(buckets ? { buckets } : {}) };
    entries.set(name, entry);
    return {
      name,
      labels(...values: string[]): C {
        if (values.length !== labelNames.length) throw new Error(`${name} takes ${labelNames.length} label values, got ${values.length}`);
        const key = values.join("\u0000");
        let found = entry.children.get(key);
        if (found === undefined) entry.children.set(key, (found = { labels: values, child: make() }));
        return found.child as C;
      },
    };
  }

  function renderEntry(e: Entry, out: string[]): void {
    out.push(`# HELP ${e.name} ${escapeHelp(e.help)}`, `# TYPE ${e.name} ${e.type}`);
    for (const { labels, child } of e.children.values()) {
      if (e.type !== "histogram") {
        out.push(`${e.name}${labelText(e.labelNames, labels)} ${formatNumber((child as Counter | Gauge).value)}`);
        continue;
      }
      const h = child as Histogram;
      let cumulative = 0;
      for (let i = 0; i <= h.bounds.length; i++) {
        cumulative += h.counts[i] as number;
        const le = i < h.bounds.length ? formatNumber(h.bounds[i] as number) : "+Inf";
        out.push(`${e.name}_bucket${labelText(e.labelNames, labels, `le="${le}"`)} ${cumulative}`);
      }
      out.push(`${e.name}_sum${labelText(e.labelNames, labels)} ${formatNumber(h.sum)}`, `${e.name}_count${labelText(e.labelNames, labels)} ${h.count}`);
    }
  }

  return {
    counter: (name, help, labelNames = []) => family<CounterChild>("counter", name, help, labelNames, () => new Counter()),
    gauge: (name, help, labelNames = []) => family<GaugeChild>("gauge", name, help, labelNames, () => new Gauge()),
    histogram: (name, help, buckets, labelNames = []) => {
      for (let i = 1; i < buckets.length; i++) if (!((buckets[i] as number) > (buckets[i - 1] as number))) throw new Error(`buckets of ${name} must ascend`);
      return family<HistogramChild>("histogram", name, help, labelNames, () => new Histogram(buckets), buckets);
    },
    collect(collector) {
      collectors.push(collector);
    },
    async render() {
      for (const c of collectors) await c();
      const out: string[] = [];
      for (const e of entries.values()) renderEntry(e, out);
      return out.join("\n") + "\n";
    },
    value(name, labels = {}) {
      const e = entries.get(name);
      if (!e) return undefined;
      const found = e.children.get(e.labelNames.map((n) => labels[n] ?? "").join("\u0000"));
      if (!found) return undefined;
      return e.type === "histogram" ? (found.child as Histogram).count : (found.child as Counter | Gauge).value;
    },
  };
}
