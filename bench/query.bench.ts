/**
 * Per-endpoint query latency on a large live dataset: writes observations of 100,000 businesses (every
 * metric of each business's category, over the latest quarters) to a CSV, imports it into a temporary
 * SQLite file, then times `app.fetch` of each data endpoint in-process, one request at a time, with live
 * enterprise keys (so every request runs the whole pipeline: key lookup, rate limits, quota counting,
 * cell read and statistics). Categories rotate across requests, so cells come from every part of the data.
 *
 *   npx tsx --tsconfig bench/tsconfig.json bench/query.bench.ts     BENCH_QUICK=1: 2 quarters, fewer requests
 */
import { once } from "node:events";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CATEGORIES, defineConfig, metricsOf } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { hashSecretNode } from "../packages/adapter-node/src/hash-secret-node.ts";
import { importFile, openStorage } from "@benchdata/storage-kysely";
import { installBridgeResponse, simpleResponseParts } from "../packages/adapter-node/src/bridge-response.ts";
import { seedKeys } from "./lib/seed-keys.ts";

/** One endpoint's latency figures, µs. */
export interface EndpointLatency {
  readonly endpoint: string;
  readonly example: string;
  readonly requests: number;
  /** The very first request (cold cell cache). */
  readonly firstMicros: number;
  readonly p50Micros: number;
  readonly p99Micros: number;
  readonly meanMicros: number;
  readonly non2xx: number;
  readonly responseBytes: number;
}

/** What the query bench measured. */
export interface QueryBenchResult {
  readonly businesses: number;
  readonly quarters: number;
  readonly rows: number;
  readonly cells: number;
  readonly fileMb: number;
  readonly importSeconds: number;
  readonly endpoints: EndpointLatency[];
}

const SEGMENTS = ["smb", "mid_market", "enterprise", "micro"] as const;

function quarters(count: number): string[] {
  // Ending at 2026-Q2, oldest first.
  const out: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    const index = 2026 * 4 + 1 - i;
    out.push(`${Math.floor(index / 4)}-Q${(index % 4) + 1}`);
  }
  return out;
}

/** Writes the dataset: every business keeps its category and segment; values are plausible per metric kind. */
async function writeDataset(path: string, businesses: number, periods: readonly string[]): Promise<number> {
  const out = createWriteStream(path, { highWaterMark: 1 << 20 });
  out.write("business_id,category,segment,period,metric,value\n");
  let seed = 0x2545f491;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let rows = 0;
  let chunk = "";
  for (const period of periods) {
    for (let b = 0; b < businesses; b++) {
      const category = CATEGORIES[b % CATEGORIES.length] as string;
      const segment = SEGMENTS[Math.floor(b / CATEGORIES.length) % SEGMENTS.length] as string;
      for (const metric of metricsOf(category as (typeof CATEGORIES)[number])) {
        const value = metric === "customer_ltv" || metric === "customer_acquisition_cost" || metric === "average_order_value" ? 50 + random() * 5000 : random();
        chunk += `biz_${b},${category},${segment},${period},${metric},${value.toFixed(4)}\n`;
        rows += 1;
        if (chunk.length > 1 << 16) {
          if (!out.write(chunk)) await once(out, "drain");
          chunk = "";
        }
      }
    }
  }
  out.end(chunk);
  await once(out, "finish");
  return rows;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Builds the dataset, imports it, and times each data endpoint. */
export async function runQueryBench(options: { businesses?: number; quarters?: number; requests?: number; log?: (line: string) => void } = {}): Promise<QueryBenchResult> {
  installBridgeResponse(); // as adapter-node's serve does; the in-process figures then match the server's work
  const businesses = options.businesses ?? 100_000;
  const periods = quarters(options.quarters ?? 4);
  const perEndpoint = options.requests ?? 3000;
  const log = options.log ?? ((line: string): void => void process.stderr.write(`${line}\n`));
  const dir = mkdtempSync(join(tmpdir(), "benchdata-query-bench-"));
  try {
    const csv = join(dir, "dataset.csv");
    const rows = await writeDataset(csv, businesses, periods);
    const fileMb = statSync(csv).size / 1e6;
    const storage = await openStorage(`sqlite:${join(dir, "query.db")}`);
    await storage.migrate();
    const started = performance.now();
    const summary = await importFile(storage, csv);
    const importSeconds = (performance.now() - started) / 1000;
    log(`query bench: imported ${rows.toLocaleString("en")} rows of ${summary.businesses.toLocaleString("en")} businesses into ${summary.cells} cells in ${importSeconds.toFixed(1)} s`);

    const adminToken = "bench-admin-token";
    const app = createApp({ storage, config: defineConfig({ target: "live" }), adminToken, hashSecret: hashSecretNode });
    // Enterprise keys: 1000 requests per minute each, so spread the requests over enough of them.
    const keys = await seedKeys({ fetch: app.fetch, adminToken, keys: Math.max(20, Math.ceil((perEndpoint * 4.5) / 800)), environment: "live" });
    const endpoints: [string, (category: string) => string][] = [
      ["GET /benchmarks", (c) => `/data/v1/benchmarks?category=${c}`],
      ["GET /benchmarks/percentile", (c) => `/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=${c}`],
      ["GET /benchmarks/distribution", (c) => `/data/v1/benchmarks/distribution?metric=gross_margin&category=${c}&buckets=20`],
      ["GET /benchmarks/history", (c) => `/data/v1/benchmarks/history?metric=gross_margin&category=${c}&periods=${periods.length}`],
    ];
    let k = 0;
    const results: EndpointLatency[] = [];
    for (const [endpoint, pathOf] of endpoints) {
      const requests = CATEGORIES.map((c) => pathOf(c));
      const timings: number[] = [];
      let non2xx = 0;
      let bytes = 0;
      let first = 0;
      const total = perEndpoint + Math.min(300, perEndpoint); // the first ones warm the JIT and are not kept
      for (let i = 0; i < total; i++) {
        const request = new Request(`http://api.local${requests[i % requests.length] as string}`, { headers: { authorization: `Bearer ${keys[k++ % keys.length] as string}` } });
        const t0 = performance.now();
        const response = await app.fetch(request);
        const parts = simpleResponseParts(response);
        const body = parts === undefined ? await response.text() : parts.body;
        const micros = (performance.now() - t0) * 1000;
        if (i === 0) first = micros;
        if (i >= total - perEndpoint) {
          timings.push(micros);
          if (response.status !== 200) non2xx++;
          bytes += typeof body === "string" ? body.length : (body?.byteLength ?? 0);
        }
      }
      timings.sort((a, b) => a - b);
      results.push({
        endpoint,
        example: pathOf("saas"),
        requests: perEndpoint,
        firstMicros: first,
        p50Micros: percentile(timings, 50),
        p99Micros: percentile(timings, 99),
        meanMicros: timings.reduce((a, b) => a + b, 0) / timings.length,
        non2xx,
        responseBytes: bytes / perEndpoint,
      });
    }
    await storage.close();
    return { businesses: summary.businesses, quarters: periods.length, rows, cells: summary.cells, fileMb, importSeconds, endpoints: results };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const quick = process.env.BENCH_QUICK === "1";
  const result = await runQueryBench(quick ? { quarters: 2, requests: 1000 } : {});
  console.log(JSON.stringify(result, null, 2));
}
