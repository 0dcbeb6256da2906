// The assembled peer: what a user could build instead of benchdata for the benchmark request, from well-known
// parts. Fastify; @fastify/rate-limit in memory, keyed by the bearer token (a fixed window); a key table of
// SHA-256 hashes (the keys hashed once at start, each request's token hashed and looked up); and a percentile
// rank over the sorted sample of the same cell benchdata answers from (the synthetic saas/all gross_margin cell
// of its latest quarter), answering GET /data/v1/benchmarks/percentile with the same JSON shape.
//
// It does less than benchdata: no sliding window, no day counter, no quota or usage, no request id, no
// publication rule (the rank is always the exact one). That is the point of the comparison.
//
//   BENCH_KEYS_FILE   a JSON array of raw API keys (required)      PORT   (0: any free port)
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import rateLimit from "@fastify/rate-limit";
import Fastify from "fastify";
import { createSyntheticSource, defineConfig } from "@benchdata/core";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

const keys = JSON.parse(readFileSync(process.env.BENCH_KEYS_FILE as string, "utf8")) as string[];
const keyTable = new Map<string, { keyId: string }>(keys.map((raw, i) => [sha256(raw), { keyId: `key_${i}` }]));

// The same sample as benchdata's answer: its synthetic dataset, default seed, latest quarter.
const source = createSyntheticSource(defineConfig({}).data.syntheticSeed);
const period = await source.latestPeriod("saas", "all", "quarterly");
const cell = period === null ? undefined : (await source.cells("saas", "all", period, ["gross_margin"])).get("gross_margin");
if (period === null || cell === undefined) throw new Error("no synthetic saas gross_margin cell");
const sorted = cell.sorted;

/** How many values are below `value` (strict) or at most `value` (weak), by binary search. */
function countBelow(value: number, weak: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value || (weak && sorted[mid] === value)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
/** Linear-interpolation quantile (numpy's default). */
function quantile(q: number): number {
  const at = q * (sorted.length - 1);
  const i = Math.floor(at);
  const a = sorted[i] as number;
  const b = sorted[Math.min(i + 1, sorted.length - 1)] as number;
  return a + (b - a) * (at - i);
}
const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const context = { p50: round4(quantile(0.5)), p75: round4(quantile(0.75)), p90: round4(quantile(0.9)) };

const app = Fastify({ logger: false });

// Authentication first: an unknown token is refused before it can take a rate-limit slot.
app.addHook("onRequest", async (request, reply) => {
  const header = request.headers.authorization;
  const token = header !== undefined && header.startsWith("Bearer ") ? header.slice(7) : "";
  const key = token === "" ? undefined : keyTable.get(sha256(token));
  if (key === undefined) return reply.code(401).send({ detail: "invalid API key", code: "auth.invalid_key", status: 401 });
  (request as unknown as { token: string }).token = token;
});
await app.register(rateLimit, {
  max: 1_000_000,
  timeWindow: 60_000,
  keyGenerator: (request) => (request as unknown as { token: string }).token,
});

app.get(
  "/data/v1/benchmarks/percentile",
  {
    schema: {
      querystring: {
        type: "object",
        required: ["category", "metric", "value"],
        properties: { category: { type: "string", enum: ["saas"] }, metric: { type: "string", enum: ["gross_margin"] }, value: { type: "number" } },
      },
      response: {
        200: {
          type: "object",
          properties: {
            metric: { type: "string" },
            value: { type: "number" },
            category: { type: "string" },
            segment: { type: "string" },
            period: { type: "string" },
            percentile: { type: "number" },
            interpretation: { type: "string" },
            context: { type: "object", properties: { p50: { type: "number" }, p75: { type: "number" }, p90: { type: "number" } } },
          },
        },
      },
    },
  },
  async (request) => {
    const { category, metric, value } = request.query as { category: string; metric: string; value: number };
    const percentile = Math.round((((countBelow(value, false) + countBelow(value, true)) * 50) / sorted.length) * 10) / 10;
    return {
      metric,
      value,
      category,
      segment: "all",
      period,
      percentile,
      interpretation: `A gross margin of ${Math.round(value * 1000) / 10}% is at percentile ${percentile.toFixed(1)} of ${category} (all segments) in ${period}. Higher is better for this metric, so it is better than about ${Math.round(percentile)}% of peers.`,
      context,
    };
  },
);

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" });
console.log(`listening ${new URL(address).port}`);
process.on("SIGTERM", () => {
  void app.close().then(() => process.exit(0));
});
