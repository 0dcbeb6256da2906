// HTTP load harness: each target's server runs in its own process, one at a time, while autocannon
// loads it from this process; throughput is reported next to the bare node:http floor.
//
//   npx tsx bench/http.bench.ts        BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_CONNECTIONS (50),
//                                      BENCH_ROUNDS (3: targets alternate, order reversed every other
//                                      round, the median run is kept),
//                                      BENCH_TARGETS (comma-separated names to run a subset)
//
// On a small shared machine one run of one target swings by ±30%: rounds that alternate the targets
// and keep the median, plus the server's CPU time per request (which load elsewhere disturbs far
// less than req/s), are what make the ratios worth reading.
import { pathToFileURL } from "node:url";
import { type HttpTarget, startTarget } from "./lib/http-target.ts";
import { type LoadResult, measureLoad } from "./lib/measure-load.ts";

export type { HttpTarget } from "./lib/http-target.ts";

/** One target's figures (its median run); ratios compare with the baseline round by round (null without one). */
export interface HttpBenchResult extends LoadResult {
  name: string;
  /** Throughput over the baseline's: median over rounds of the same-round ratio. */
  ratio: number | null;
  /** Server CPU time per request, µs (Linux only, else null): steadier than req/s on a busy machine. */
  cpuMicrosPerRequest: number | null;
  /** Baseline's CPU per request over this one's: the throughput ratio if the server had a core to itself. */
  cpuRatio: number | null;
  /** CPU per request spent by the target's helpers (its database), µs; null when the target has none. */
  sideCpuMicrosPerRequest: number | null;
  /** The load generator's CPU per request (median round), µs. */
  clientCpuMicrosPerRequest: number | null;
  /** Share of responses outside 2xx over every measured round, 0–1. */
  non2xxShare: number;
  /** Every successful round's run, in order. */
  rounds: TargetRun[];
  /** Why some or all rounds failed, when they did. */
  error?: string;
}

/** One measured run of one target. */
export interface TargetRun extends LoadResult {
  cpuMicrosPerRequest: number | null;
  sideCpuMicrosPerRequest: number | null;
  /** CPU of this process (the load generator) per request, µs: it shares the machine with the server. */
  clientCpuMicrosPerRequest: number;
}

/** How long and how hard to load each target. */
export interface HttpBenchOptions {
  seconds?: number;
  warmupSeconds?: number;
  connections?: number;
  rounds?: number;
  /** Progress lines; defaults to stderr. */
  log?: (line: string) => void;
}

/** The static-route targets: the node:http floor, adapter-node (two ways), adapter-bun; append pipeline targets. */
export function defaultHttpTargets(): HttpTarget[] {
  return [
    { name: "node:http floor", script: "bench/lib/target-node-floor.ts", baseline: true },
    { name: "adapter-node static", script: "bench/lib/target-node-static.ts" },
    // The same route with the runtime's own Response class: what the lightweight Response saves.
    {
      name: "adapter-node static, native Response",
      script: "bench/lib/target-node-static.ts",
      env: { BENCH_LIGHT_RESPONSE: "0" },
    },
    { name: "adapter-bun static", script: "bench/lib/target-bun-static.ts", runtime: "bun" },
  ];
}

function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function perRequest(before: number | null, after: number | null, total: number): number | null {
  return before === null || after === null || total === 0 ? null : ((after - before) * 1000) / total;
}

async function measureTarget(target: HttpTarget, options: Required<HttpBenchOptions>): Promise<TargetRun> {
  const running = await startTarget(target);
  try {
    const request = (typeof target.request === "function" ? target.request() : target.request) ?? {};
    const first = request.requests?.[0] ?? request;
    // A target that answers wrongly would post a meaningless number: check one answer first.
    const probe = await fetch(running.url + (first.path ?? request.path ?? "/"), {
      method: first.method ?? "GET",
      headers: first.headers,
      body: first.body,
    });
    await probe.arrayBuffer();
    if (probe.status >= 400) throw new Error(`${target.name}: probe answered ${probe.status}`);
    const load = { ...request, url: running.url + (request.path ?? "/"), connections: options.connections };
    // Unmeasured load first, so the JIT and the connection pool settle.
    if (options.warmupSeconds > 0) await measureLoad({ ...load, seconds: options.warmupSeconds });
    const cpuBefore = running.cpuMs();
    const sideBefore = target.sideCpuMs?.() ?? null;
    const client = process.cpuUsage();
    const result = await measureLoad({ ...load, seconds: options.seconds });
    const clientCpu = process.cpuUsage(client);
    const sideAfter = target.sideCpuMs?.() ?? null;
    const cpuAfter = running.cpuMs();
    return {
      ...result,
      clientCpuMicrosPerRequest: result.total === 0 ? 0 : (clientCpu.user + clientCpu.system) / result.total,
      cpuMicrosPerRequest: perRequest(cpuBefore, cpuAfter, result.total),
      sideCpuMicrosPerRequest: perRequest(sideBefore, sideAfter, result.total),
    };
  } finally {
    await running.stop();
  }
}

/** Load every target in turn (each in its own server process) and return their figures. */
export async function runHttpBench(
  targets: HttpTarget[] = defaultHttpTargets(),
  options: HttpBenchOptions = {},
): Promise<HttpBenchResult[]> {
  const settings: Required<HttpBenchOptions> = {
    seconds: options.seconds ?? envNumber("BENCH_SECONDS", 5),
    warmupSeconds: options.warmupSeconds ?? envNumber("BENCH_WARMUP", 1),
    connections: options.connections ?? envNumber("BENCH_CONNECTIONS", 50),
    rounds: options.rounds ?? envNumber("BENCH_ROUNDS", 3),
    log: options.log ?? ((line: string): void => void process.stderr.write(`${line}\n`)),
  };
  // Runs by round; null where the target failed that round (it is reported, and the others go on).
  const runs = new Map<HttpTarget, (TargetRun | null)[]>(targets.map((target) => [target, []]));
  const errors = new Map<HttpTarget, string>();
  for (let round = 1; round <= settings.rounds; round++) {
    // Every other round runs the targets in reverse, so a slow drift of the machine's load does not
    // always favour the targets measured nearest the floor.
    const order = round % 2 === 0 ? [...targets].reverse() : targets;
    for (const target of order) {
      let result: TargetRun;
      try {
        result = await measureTarget(target, settings);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        errors.set(target, message);
        (runs.get(target) as (TargetRun | null)[])[round - 1] = null;
        settings.log(`round ${round}/${settings.rounds} ${target.name}: FAILED ${message}`);
        continue;
      }
      (runs.get(target) as (TargetRun | null)[])[round - 1] = result;
      const cpu = result.cpuMicrosPerRequest === null ? "" : `, ${result.cpuMicrosPerRequest.toFixed(1)} µs CPU/req`;
      const side = result.sideCpuMicrosPerRequest === null ? "" : ` (+${result.sideCpuMicrosPerRequest.toFixed(1)} µs database)`;
      const refused = result.non2xx === 0 ? "" : `, ${result.non2xx} non-2xx ${JSON.stringify(result.statusCodes)}`;
      settings.log(
        `round ${round}/${settings.rounds} ${target.name}: ${Math.round(result.requestsPerSecond)} req/s, ` +
          `p50 ${result.p50} ms, p99 ${result.p99} ms${cpu}${side}${refused}`,
      );
    }
  }
  const floorRuns = runs.get(targets.find((target) => target.baseline === true) as HttpTarget) ?? null;
  return targets.map((target): HttpBenchResult => {
    const byRound = runs.get(target) as (TargetRun | null)[];
    const all = byRound.filter((run): run is TargetRun => run !== null && run !== undefined);
    // The run with the median throughput stands for the target, latencies included.
    const byThroughput = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    const result = byThroughput[Math.floor((byThroughput.length - 1) / 2)] ?? { requestsPerSecond: 0, p50: 0, p99: 0, total: 0, errors: 0, non2xx: 0, statusCodes: {}, clientCpuMicrosPerRequest: 0 };
    // Ratios pair each round with the floor's run of the same round (load from elsewhere drifts slowly,
    // so neighbours in time see about the same machine), then take the median over rounds.
    const paired = (f: (run: TargetRun, base: TargetRun) => number | null): number | null =>
      floorRuns === null ? null : median(byRound.map((run, round) => (run && floorRuns[round] ? f(run, floorRuns[round] as TargetRun) : null)));
    return {
      name: target.name,
      ...result,
      cpuMicrosPerRequest: median(all.map((run) => run.cpuMicrosPerRequest)),
      sideCpuMicrosPerRequest: median(all.map((run) => run.sideCpuMicrosPerRequest)),
      clientCpuMicrosPerRequest: median(all.map((run) => run.clientCpuMicrosPerRequest)),
      non2xxShare: all.reduce((n, run) => n + run.non2xx, 0) / Math.max(1, all.reduce((n, run) => n + run.total, 0)),
      rounds: all,
      ratio: paired((run, base) => run.requestsPerSecond / base.requestsPerSecond),
      cpuRatio: paired((run, base) => (base.cpuMicrosPerRequest === null || run.cpuMicrosPerRequest === null ? null : base.cpuMicrosPerRequest / run.cpuMicrosPerRequest)),
      ...(errors.has(target) ? { error: `${byRound.filter((run) => run === null).length} of ${settings.rounds} rounds failed: ${errors.get(target)?.split("\n").slice(0, 2).join(" ")}` } : {}),
    };
  });
}

function median(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const middle = known.length / 2;
  return Number.isInteger(middle)
    ? ((known[middle - 1] as number) + (known[middle] as number)) / 2
    : (known[Math.floor(middle)] as number);
}

/** A plain-text table of results. */
export function formatHttpBench(results: HttpBenchResult[]): string {
  const rows = [
    ["target", "req/s", "p50 ms", "p99 ms", "vs floor", "CPU µs/req", "CPU vs floor", "DB µs/req", "errors", "non-2xx"],
    ...results.map((r) => [
      r.name,
      String(Math.round(r.requestsPerSecond)),
      String(r.p50),
      String(r.p99),
      r.ratio === null ? "-" : `${(r.ratio * 100).toFixed(1)}%`,
      r.cpuMicrosPerRequest === null ? "-" : r.cpuMicrosPerRequest.toFixed(1),
      r.cpuRatio === null ? "-" : `${(r.cpuRatio * 100).toFixed(1)}%`,
      r.sideCpuMicrosPerRequest === null ? "-" : r.sideCpuMicrosPerRequest.toFixed(1),
      String(r.errors),
      `${(r.non2xxShare * 100).toFixed(2)}%`,
    ]),

  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  const failures = results.filter((r) => r.error !== undefined).map((r) => `${r.name}: ${r.error as string}`);
  return [
    ...rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join("  ")),
    ...failures,
  ].join("\n");
}

async function main(): Promise<void> {
  const only = process.env.BENCH_TARGETS?.split(",").map((name) => name.trim());
  const targets = defaultHttpTargets().filter((target) => only === undefined || only.includes(target.name));
  const results = await runHttpBench(targets);
  console.log(formatHttpBench(results));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
