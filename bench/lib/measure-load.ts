import { createRequire } from "node:module";

/** One load run's figures. */
export interface LoadResult {
  /** Mean requests per second over the run. */
  requestsPerSecond: number;
  /** Median latency, ms. */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
  /** Requests answered in total. */
  total: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Responses outside 2xx. */
  non2xx: number;
  /** Responses by status code, e.g. `{ "200": 51234 }`. */
  statusCodes: Record<string, number>;
}

/** One request shape; autocannon prebuilds each into bytes, so rotating among many costs the client nothing. */
export interface LoadRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** How to load a URL. */
export interface LoadOptions {
  url: string;
  /** Seconds of measured load. */
  seconds: number;
  /** A fixed number of requests instead of `seconds` (e.g. to count instructions per request). */
  amount?: number;
  connections: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Requests every connection cycles through in order (e.g. one per API key); replaces method/headers/body. */
  requests?: LoadRequest[];
}

// The part of autocannon's programmatic API used here (the package ships no types).
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

/** Run autocannon against one URL for `seconds` and summarise. */
export async function measureLoad(options: LoadOptions): Promise<LoadResult> {
  const base = {
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    method: options.method ?? "GET",
    headers: options.headers,
    body: options.body,
    ...(options.requests !== undefined && options.requests.length > 0 ? { requests: options.requests } : {}),
  };
  const result = await autocannon(options.amount !== undefined ? { ...base, amount: options.amount, timeout: 60 } : { ...base, duration: options.seconds });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count])),
  };
}
