/**
 * Webhook delivery benchmark: deliveries per second from one worker to one local receiver, and the latency
 * of a healthy receiver's deliveries (event written → request received) with and without another receiver
 * that hangs for the whole time-out. In-memory storage, node:http receivers on 127.0.0.1 in a child
 * process, the production Node transport, http allowed. The time-out is shortened to 2 s so the hanging receiver cycles.
 * Throughput with `webhooks.ordered` (the default: one delivery of the webhook at a time, in event order) and
 * without it (up to concurrencyPerWebhook at once); the latency runs use the default (ordered).
 *
 * Run: npx tsx bench/webhooks.bench.ts
 */
import { spawn } from "node:child_process";
import { register } from "node:module";
import { resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import type { Storage } from "../packages/core/src/index.ts";
import { createDeliveryWorker, createMemoryStorage, cryptoRandom, defineConfig, generateSigningSecret, newId, quotaWarningEvent, systemClock } from "../packages/core/src/index.ts";

// The adapter's transport imports `@benchdata/core`; point that at the same sources as above (one copy of
// core, no build needed) before loading it.
const coreSource = new URL("../packages/core/src/index.ts", import.meta.url).href;
register(
  `data:text/javascript,${encodeURIComponent(
    `export async function resolve(s, c, next) { return s === "@benchdata/core" ? next(${JSON.stringify(coreSource)}, c) : next(s, c); }`,
  )}`,
);
const { nodeResolve, nodeTransport } = (await import("../packages/adapter-node/src/webhook-transport.ts")) as typeof import("../packages/adapter-node/src/webhook-transport.ts");

/** One throughput run. */
export interface ThroughputResult {
  readonly deliveries: number;
  readonly concurrencyPerWebhook: number;
  /** `webhooks.ordered`: one delivery of the webhook at a time, in event order (concurrencyPerWebhook then does not matter). */
  readonly ordered: boolean;
  readonly seconds: number;
  readonly perSecond: number;
}

/** One latency run of the healthy receiver. */
export interface LatencyResult {
  readonly scenario: "healthy only" | "with a hanging receiver";
  readonly events: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Attempts that timed out at the hanging receiver during the run. */
  readonly hangingTimeouts: number;
}

/** Everything the bench measured. */
export interface WebhooksBenchResult {
  readonly timeoutSeconds: number;
  readonly throughput: ThroughputResult[];
  readonly latency: LatencyResult[];
}

const TIMEOUT_SECONDS = 2;

// The receivers run in a child process, so the worker's numbers are not shared with the receivers' CPU time.
const RECEIVERS_SCRIPT = `
const http = require("node:http");
const arrivals = {};
const now = () => performance.timeOrigin + performance.now();
function server(hang) {
  const s = http.createServer({ keepAliveTimeout: 10000 }, (req, res) => {
    req.resume();
    req.on("end", () => {
      if (!hang) arrivals[req.headers["x-service-event-id"]] = now();
      if (!hang) res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    });
  });
  return new Promise((ok) => s.listen(0, "127.0.0.1", () => ok(s.address().port)));
}
Promise.all([server(false), server(true)]).then(([healthy, hanging]) => process.send({ healthy, hanging }));
process.on("message", (m) => {
  if (m === "arrivals") process.send({ arrivals });
  if (m === "reset") for (const k of Object.keys(arrivals)) delete arrivals[k];
});
`;

interface Receivers {
  readonly healthyUrl: string;
  readonly hangingUrl: string;
  /** Arrival times (Unix ms, sub-millisecond) by event id at the healthy receiver. */
  arrivals(): Promise<Record<string, number>>;
  close(): void;
}

async function startReceivers(): Promise<Receivers> {
  const child = spawn(process.execPath, ["-e", RECEIVERS_SCRIPT], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ports = await new Promise<{ healthy: number; hanging: number }>((ok) => child.once("message", (m) => ok(m as { healthy: number; hanging: number })));
  return {
    healthyUrl: `http://127.0.0.1:${ports.healthy}/hook`,
    hangingUrl: `http://127.0.0.1:${ports.hanging}/hook`,
    arrivals: () =>
      new Promise((ok) => {
        child.once("message", (m) => ok((m as { arrivals: Record<string, number> }).arrivals));
        child.send("arrivals");
      }),
    close: () => child.kill(),
  };
}

const wallNow = (): number => performance.timeOrigin + performance.now();

async function account(storage: Storage): Promise<string> {
  const id = newId("acc", systemClock, cryptoRandom);
  await storage.createAccount({ id, name: "bench", tier: "developer", createdAt: systemClock.now(), limits: {}, allowedCidrs: [], billing: {} });
  return id;
}

async function webhook(storage: Storage, accountId: string, url: string): Promise<string> {
  const id = newId("wh", systemClock, cryptoRandom);
  await storage.createWebhook({ id, accountId, url, events: ["quota.warning"], secret: generateSigningSecret(cryptoRandom), createdAt: systemClock.now() }, 100);
  return id;
}

async function emit(storage: Storage, accountId: string, i: number): Promise<string> {
  const id = newId("evt", systemClock, cryptoRandom);
  const now = systemClock.now();
  await storage.emitEvent(quotaWarningEvent(id, accountId, now, { used: i, allowance: 100_000, threshold: 80_000, periodStart: now, periodEnd: now + 1 }), now);
  return id;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function throughput(receivers: Receivers, deliveries: number, concurrencyPerWebhook: number, ordered: boolean): Promise<ThroughputResult> {
  const storage = createMemoryStorage();
  const config = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: TIMEOUT_SECONDS, concurrencyPerWebhook, ordered } });
  const accountId = await account(storage);
  await webhook(storage, accountId, receivers.healthyUrl);
  for (let i = 0; i < deliveries; i++) await emit(storage, accountId, i);
  let delivered = 0;
  const logger = { info: (m: string) => void (m === "webhook delivered" && delivered++), warn() {}, error() {} };
  const transport = nodeTransport({ maxSocketsPerOrigin: concurrencyPerWebhook });
  const worker = createDeliveryWorker({ storage, clock: systemClock, transport, resolve: nodeResolve, config, concurrency: 64, logger });
  const started = performance.now();
  worker.start();
  while (delivered < deliveries) await new Promise((ok) => setTimeout(ok, 2));
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  transport.close();
  return { deliveries, concurrencyPerWebhook, ordered, seconds, perSecond: deliveries / seconds };
}

async function latency(receivers: Receivers, withHanging: boolean, seconds: number, ratePerSecond: number): Promise<LatencyResult> {
  const storage = createMemoryStorage();
  const config = defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: TIMEOUT_SECONDS } });
  const accountId = await account(storage);
  const healthyId = await webhook(storage, accountId, receivers.healthyUrl);
  const hangingId = withHanging ? await webhook(storage, accountId, receivers.hangingUrl) : null;
  const transport = nodeTransport();
  const worker = createDeliveryWorker({ storage, clock: systemClock, transport, resolve: nodeResolve, config, concurrency: 32 });
  worker.start();
  const emitted = new Map<string, number>();
  const total = seconds * ratePerSecond;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
    const t = wallNow();
    const id = await emit(storage, accountId, i);
    emitted.set(id, t);
    worker.nudge(); // as the HTTP app does after writing events
  }
  const deadline = performance.now() + 10_000;
  const healthyDone = async (): Promise<boolean> => (await storage.listDeliveries(accountId, healthyId, 1_000_000)).every((d) => d.status === "succeeded");
  while (!(await healthyDone()) && performance.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
  await worker.stop();
  transport.close();
  const arrivals = await receivers.arrivals();
  const lat = [...emitted].map(([id, t]) => (arrivals[id] ?? Infinity) - t).sort((a, b) => a - b);
  let hangingTimeouts = 0;
  if (hangingId) for (const d of await storage.listDeliveries(accountId, hangingId, 1_000_000)) hangingTimeouts += d.attemptLog.filter((a) => a.error === "timeout").length;
  return {
    scenario: withHanging ? "with a hanging receiver" : "healthy only",
    events: total,
    p50Ms: percentile(lat, 50),
    p99Ms: percentile(lat, 99),
    maxMs: lat[lat.length - 1]!,
    hangingTimeouts,
  };
}

/** Runs the webhook benchmarks. */
export async function runWebhooksBench(options: { deliveries?: number; latencySeconds?: number; ratePerSecond?: number } = {}): Promise<WebhooksBenchResult> {
  const receivers = await startReceivers();
  try {
    const n = options.deliveries ?? 5000;
    const tp: ThroughputResult[] = [];
    await throughput(receivers, 500, 4, false); // warm-up (JIT, sockets)
    tp.push(await throughput(receivers, n, 4, true));
    for (const per of [4, 16]) tp.push(await throughput(receivers, n, per, false));
    const secs = options.latencySeconds ?? 6;
    const rate = options.ratePerSecond ?? 100;
    const lat = [await latency(receivers, false, secs, rate), await latency(receivers, true, secs, rate)];
    return { timeoutSeconds: TIMEOUT_SECONDS, throughput: tp, latency: lat };
  } finally {
    receivers.close();
  }
}

/** The results as Markdown tables. */
export function formatWebhooksBench(r: WebhooksBenchResult): string {
  const rows = [
    "| deliveries | ordered | concurrencyPerWebhook | seconds | deliveries/s |",
    "|---:|---|---:|---:|---:|",
    ...r.throughput.map((t) => `| ${t.deliveries} | ${t.ordered ? "yes" : "no"} | ${t.ordered ? "(1)" : t.concurrencyPerWebhook} | ${t.seconds.toFixed(2)} | ${t.perSecond.toFixed(0)} |`),
    "",
    `| healthy receiver (time-out ${r.timeoutSeconds} s) | events | p50 ms | p99 ms | max ms | time-outs at the hanging receiver |`,
    "|---|---:|---:|---:|---:|---:|",
    ...r.latency.map((l) => `| ${l.scenario} | ${l.events} | ${l.p50Ms.toFixed(1)} | ${l.p99Ms.toFixed(1)} | ${l.maxMs.toFixed(1)} | ${l.hangingTimeouts} |`),
  ];
  return rows.join("\n");
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolvePath(process.argv[1])).href;
if (invokedDirectly) {
  const result = await runWebhooksBench();
  console.log(`Node ${process.version}; memory storage; node:http receivers on 127.0.0.1 (child process); one worker (global concurrency 64 for throughput, 32 for latency).\n`);
  console.log(formatWebhooksBench(result));
}
