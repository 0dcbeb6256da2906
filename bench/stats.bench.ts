/**
 * Statistics micro-benchmark: our kernels (packages/core/src/stats) against d3-array and a plain
 * JavaScript implementation, on 1k / 100k / 1M values, measuring the query on an already sorted
 * sample (cells are sorted once at import); the one-time sort is measured separately.
 *
 * Run: npx tsx bench/stats.bench.ts
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { bin, bisectLeft, bisectRight, mean as d3Mean, quantileSorted as d3QuantileSorted } from "d3-array";
import { createPrng } from "../packages/core/src/data/prng.ts";
import { histogram, percentileRank, percentileSet } from "../packages/core/src/stats/index.ts";

/** One measured (operation, size, implementation): the median over the timed samples. */
export interface BenchResult {
  readonly op: string;
  readonly size: number;
  readonly impl: "ours" | "d3-array" | "plain-js" | "Float64Array.sort" | "Array.sort(cmp)";
  readonly nsPerOp: number;
  readonly opsPerSec: number;
  readonly samples: number;
  readonly callsPerSample: number;
}

const SIZES = [1_000, 100_000, 1_000_000] as const;
const BUCKETS = 20;
const QUERIES = 1024; // rank queries cycle through these, so no call sees a constant argument
const SAMPLES = 9;
const WARMUP_MS = 60;
const TARGET_SAMPLE_MS = 8;

// Results flow into this sink so the JIT cannot drop the work.
let sink = 0;

/** Warms `run` up and finds how many calls make one sample last about TARGET_SAMPLE_MS. */
function calibrate(run: (reps: number) => number): number {
  let reps = 1;
  const warmEnd = performance.now() + WARMUP_MS;
  for (;;) {
    const t0 = performance.now();
    sink += run(reps);
    const dt = performance.now() - t0;
    if (dt >= TARGET_SAMPLE_MS && performance.now() >= warmEnd) return reps;
    if (dt < TARGET_SAMPLE_MS) reps = Math.min(reps * 2, 1 << 26);
  }
}

/**
 * Times competing implementations of one case, their samples interleaved round-robin so that noise
 * from other processes (the machine is shared) hits every implementation alike; median ns per call.
 */
function measureInterleaved(runs: readonly ((reps: number) => number)[], samples: number): { ns: number; reps: number }[] {
  const reps = runs.map(calibrate);
  const times: number[][] = runs.map(() => []);
  for (let s = 0; s < samples; s++) {
    runs.forEach((run, k) => {
      const r = reps[k] as number;
      const t0 = performance.now();
      sink += run(r);
      (times[k] as number[]).push(((performance.now() - t0) * 1e6) / r);
    });
  }
  return times.map((t, k) => {
    t.sort((a, b) => a - b);
    return { ns: t[t.length >> 1] as number, reps: reps[k] as number };
  });
}

/** A business-metric-like sample: log-normal LTVs with a few exact ties (values rounded to cents). */
function makeSample(n: number): Float64Array {
  const prng = createPrng(`stats-bench|${n}`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(prng.lognormal(300, 0.8) * 100) / 100;
  return out;
}

// ---- percentile set (p10, p25, p50, p75, p90, mean) ----------------------------------------------

function percentileSetOurs(sorted: Float64Array): (reps: number) => number {
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const s = percentileSet(sorted);
      acc += s.p10 + s.p90 + s.mean;
    }
    return acc;
  };
}

function percentileSetD3(sorted: Float64Array): (reps: number) => number {
  // d3's quantileSorted reads any array-like at run time; its typings only admit arrays.
  const values = sorted as unknown as number[];
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const s = {
        p10: d3QuantileSorted(values, 0.1) as number,
        p25: d3QuantileSorted(values, 0.25) as number,
        p50: d3QuantileSorted(values, 0.5) as number,
        p75: d3QuantileSorted(values, 0.75) as number,
        p90: d3QuantileSorted(values, 0.9) as number,
        mean: d3Mean(sorted) as number,
      };
      acc += s.p10 + s.p90 + s.mean;
    }
    return acc;
  };
}

function percentileSetPlain(sorted: Float64Array): (reps: number) => number {
  // Nearest-rank index into the sorted sample and a for-loop sum: what one writes without a library.
  const n = sorted.length;
  const at = (q: number): number => sorted[Math.min(n - 1, Math.floor(q * n))] as number;
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += sorted[i] as number;
      const s = { p10: at(0.1), p25: at(0.25), p50: at(0.5), p75: at(0.75), p90: at(0.9), mean: sum / n };
      acc += s.p10 + s.p90 + s.mean;
    }
    return acc;
  };
}

// ---- percentile rank ----------------------------------------------------------------------------

function rankOurs(sorted: Float64Array, queries: Float64Array): (reps: number) => number {
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) acc += percentileRank(sorted, queries[r & (QUERIES - 1)] as number);
    return acc;
  };
}

function rankD3(sorted: Float64Array, queries: Float64Array): (reps: number) => number {
  const n = sorted.length;
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const v = queries[r & (QUERIES - 1)] as number;
      acc += (bisectLeft(sorted, v) + bisectRight(sorted, v)) * (50 / n);
    }
    return acc;
  };
}

function rankPlain(sorted: Float64Array, queries: Float64Array): (reps: number) => number {
  // A linear count of values below and at-or-below: the obvious version.
  const n = sorted.length;
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const v = queries[r & (QUERIES - 1)] as number;
      let below = 0;
      let atOrBelow = 0;
      for (let i = 0; i < n; i++) {
        const x = sorted[i] as number;
        if (x < v) below++;
        if (x <= v) atOrBelow++;
      }
      acc += (below + atOrBelow) * (50 / n);
    }
    return acc;
  };
}

// ---- histogram (20 equal-width buckets over [min, max]) ------------------------------------------

function histogramOurs(sorted: Float64Array): (reps: number) => number {
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) acc += histogram(sorted, BUCKETS).counts[BUCKETS - 1] as number;
    return acc;
  };
}

function histogramD3(sorted: Float64Array): (reps: number) => number {
  // d3.bin with numpy's edges as thresholds (its own "nice" thresholds would give different buckets).
  const n = sorted.length;
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const min = sorted[0] as number;
      const max = sorted[n - 1] as number;
      const step = (max - min) / BUCKETS;
      const thresholds = Array.from({ length: BUCKETS - 1 }, (_, i) => (i + 1) * step + min);
      const bins = bin<number, number>().domain([min, max]).thresholds(thresholds)(sorted);
      acc += (bins[BUCKETS - 1] as number[]).length;
    }
    return acc;
  };
}

function histogramPlain(sorted: Float64Array): (reps: number) => number {
  // One pass computing each value's bucket index: O(n) whatever the order.
  const n = sorted.length;
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) {
      const min = sorted[0] as number;
      const max = sorted[n - 1] as number;
      const scale = BUCKETS / (max - min);
      const counts = new Array<number>(BUCKETS).fill(0);
      for (let i = 0; i < n; i++) {
        const k = Math.min(BUCKETS - 1, Math.floor(((sorted[i] as number) - min) * scale));
        counts[k] = (counts[k] as number) + 1;
      }
      acc += counts[BUCKETS - 1] as number;
    }
    return acc;
  };
}

// ---- one-time sort ------------------------------------------------------------------------------

function sortTyped(raw: Float64Array): (reps: number) => number {
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) acc += raw.slice().sort()[0] as number;
    return acc;
  };
}

function sortArray(raw: Float64Array): (reps: number) => number {
  const plain = Array.from(raw);
  return (reps) => {
    let acc = 0;
    for (let r = 0; r < reps; r++) acc += plain.slice().sort((a, b) => a - b)[0] as number;
    return acc;
  };
}

/** Runs every case and returns one result per (operation, size, implementation). */
export async function runStatsBench(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const compare = (op: string, size: number, impls: [BenchResult["impl"], (reps: number) => number][]): void => {
    // The slowest peers take tens of milliseconds per call at 1M: fewer samples keep the run short.
    const samples = size >= 1_000_000 ? 5 : SAMPLES;
    const measured = measureInterleaved(impls.map(([, run]) => run), samples);
    impls.forEach(([impl], k) => {
      const m = measured[k] as { ns: number; reps: number };
      results.push({ op, size, impl, nsPerOp: m.ns, opsPerSec: 1e9 / m.ns, samples, callsPerSample: m.reps });
    });
  };
  for (const size of SIZES) {
    const raw = makeSample(size);
    const sorted = Float64Array.from(raw).sort();
    const prng = createPrng(`stats-bench-queries|${size}`);
    const queries = Float64Array.from({ length: QUERIES }, () => prng.lognormal(300, 0.8));

    compare("percentile set", size, [
      ["ours", percentileSetOurs(sorted)],
      ["d3-array", percentileSetD3(sorted)],
      ["plain-js", percentileSetPlain(sorted)],
    ]);
    compare("percentile rank", size, [
      ["ours", rankOurs(sorted, queries)],
      ["d3-array", rankD3(sorted, queries)],
      ["plain-js", rankPlain(sorted, queries)],
    ]);
    compare(`histogram (${BUCKETS} buckets)`, size, [
      ["ours", histogramOurs(sorted)],
      ["d3-array", histogramD3(sorted)],
      ["plain-js", histogramPlain(sorted)],
    ]);
    compare("sort (one-time, at import)", size, [
      ["Float64Array.sort", sortTyped(raw)],
      ["Array.sort(cmp)", sortArray(raw)],
    ]);
  }
  return results;
}

function formatNs(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(0)} ns`;
}

function ratio(x: number): string {
  return x >= 0.1 ? x.toFixed(2) : x.toPrecision(2);
}

function formatOps(ops: number): string {
  if (ops >= 1e6) return `${(ops / 1e6).toFixed(2)} M/s`;
  if (ops >= 1e3) return `${(ops / 1e3).toFixed(1)} k/s`;
  return `${ops.toFixed(1)} /s`;
}

/** The results as a Markdown table, one row per (operation, size), with ours ÷ fastest peer. */
export function formatStatsBench(results: readonly BenchResult[]): string {
  const rows: string[] = [
    "| operation | n | ours | d3-array | plain JS | ours ÷ fastest peer |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  const keys = [...new Set(results.filter((r) => r.impl === "ours").map((r) => `${r.op}\u0000${r.size}`))];
  for (const key of keys) {
    const [op, sizeText] = key.split("\u0000") as [string, string];
    const size = Number(sizeText);
    const pick = (impl: BenchResult["impl"]): BenchResult | undefined => results.find((r) => r.op === op && r.size === size && r.impl === impl);
    const ours = pick("ours") as BenchResult;
    const peers = [pick("d3-array"), pick("plain-js")].filter((r): r is BenchResult => r !== undefined);
    const fastest = Math.min(...peers.map((p) => p.nsPerOp));
    const cell = (r: BenchResult | undefined): string => (r ? `${formatNs(r.nsPerOp)} (${formatOps(r.opsPerSec)})` : "–");
    rows.push(`| ${op} | ${size.toLocaleString("en-US")} | ${cell(ours)} | ${cell(pick("d3-array"))} | ${cell(pick("plain-js"))} | ${ratio(ours.nsPerOp / fastest)}× |`);
  }
  rows.push("", "| one-time sort | n | Float64Array.prototype.sort | Array.prototype.sort((a, b) => a − b) |", "|---|---:|---:|---:|");
  for (const size of SIZES) {
    const typed = results.find((r) => r.size === size && r.impl === "Float64Array.sort");
    const array = results.find((r) => r.size === size && r.impl === "Array.sort(cmp)");
    if (typed && array) rows.push(`| sort (copy + sort) | ${size.toLocaleString("en-US")} | ${formatNs(typed.nsPerOp)} | ${formatNs(array.nsPerOp)} |`);
  }
  return rows.join("\n");
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const started = performance.now();
  const results = await runStatsBench();
  console.log(
    `Node ${process.version}; median of ${SAMPLES} timed samples (5 at 1M), implementations interleaved; query on an already sorted Float64Array.\n`,
  );
  console.log(formatStatsBench(results));
  console.log(`\n(total ${((performance.now() - started) / 1000).toFixed(1)} s; sink ${sink > 0 ? "ok" : sink})`);
}
