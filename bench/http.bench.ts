// HTTP load harness: each target's server runs in its own process, one at a time, while autocannon
// loads it from this process; throughput is reported next to the bare node:http floor.
//
//   npx tsx bench/http.bench.ts        BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_CONNECTIONS (50),
//                                      BENCH_ROUNDS (3: targets alternate, the median run is kept),
//                                      BENCH_TARGETS (comma-separated names to run a subset)
//
// On a small shared machine one run of one target swings by ±30%: rounds that alternate the targets
// and keep the median, plus the server's CPU time per request (which load elsewhere disturbs far
// less than req/s), are what make the ratios worth reading.
import { pathToFileURL } from "node:url";
import { type HttpTarget, startTarget } from "./lib/http-target.ts";
import { type LoadResult, measureLoad } from "./lib/load.ts";

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
}

interface TargetRun extends LoadResult {
  cpuMicrosPerRequest: number | null;
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

async function measureTarget(target: HttpTarget, options: Required<HttpBenchOptions>): Promise<TargetRun> {
  const running = await startTarget(target);
  try {
    const request = target.request ?? {};
    const url = running.url + (request.path ?? "/");
    // A target that answers wrongly would post a meaningless number: check one answer first.
    const probe = await fetch(url, { method: request.method ?? "GET", headers: request.headers, body: request.body });
    await probe.arrayBuffer();
    if (probe.status >= 400) throw new Error(`${target.name}: probe answered ${probe.status}`);
    const load = { url, connections: options.connections, ...request };
    // Unmeasured load first, so the JIT and the connection pool settle.
    if (options.warmupSeconds > 0) await measureLoad({ ...load, seconds: options.warmupSeconds });
    const cpuBefore = running.cpuMs();
    const result = await measureLoad({ ...load, seconds: options.seconds });
    const cpuAfter = running.cpuMs();
    const cpuMicrosPerRequest =
      cpuBefore === null || cpuAfter === null || result.total === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / result.total;
    return { ...result, cpuMicrosPerRequest };
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
  const runs = new Map<HttpTarget, TargetRun[]>(targets.map((target) => [target, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const target of targets) {
      const result = await measureTarget(target, settings);
      (runs.get(target) as TargetRun[]).push(result);
      const cpu = result.cpuMicrosPerRequest === null ? "" : `, ${result.cpuMicrosPerRequest.toFixed(1)} µs CPU/req`;
      settings.log(
        `round ${round}/${settings.rounds} ${target.name}: ${Math.round(result.requestsPerSecond)} req/s, ` +
          `p50 ${result.p50} ms, p99 ${result.p99} ms${cpu}`,
      );
    }
  }
  // The run with the median throughput stands for the target, latencies included.
  const chosen = targets.map((target) => {
    const all = runs.get(target) as TargetRun[];
    const byThroughput = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    return {
      target,
      all,
      result: byThroughput[Math.floor((byThroughput.length - 1) / 2)] as TargetRun,
      cpu: median(all.map((run) => run.cpuMicrosPerRequest)),
    };
  });
  // Ratios pair each round with the floor's run of the same round (load from elsewhere drifts slowly,
  // so neighbours in time see about the same machine), then take the median over rounds.
  const floor = chosen.find(({ target }) => target.baseline === true);
  return chosen.map(({ target, all, result, cpu }) => ({
    name: target.name,
    ...result,
    cpuMicrosPerRequest: cpu,
    ratio:
      floor === undefined
        ? null
        : median(all.map((run, round) => run.requestsPerSecond / (floor.all[round] as TargetRun).requestsPerSecond)),
    cpuRatio:
      floor === undefined
        ? null
        : median(
            all.map((run, round) => {
              const base = (floor.all[round] as TargetRun).cpuMicrosPerRequest;
              return base === null || run.cpuMicrosPerRequest === null ? null : base / run.cpuMicrosPerRequest;
            }),
          ),
  }));
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
    ["target", "req/s", "p50 ms", "p99 ms", "vs floor", "CPU µs/req", "CPU vs floor", "errors", "non-2xx"],
    ...results.map((r) => [
      r.name,
      String(Math.round(r.requestsPerSecond)),
      String(r.p50),
      String(r.p99),
      r.ratio === null ? "-" : `${(r.ratio * 100).toFixed(1)}%`,
      r.cpuMicrosPerRequest === null ? "-" : r.cpuMicrosPerRequest.toFixed(1),
      r.cpuRatio === null ? "-" : `${(r.cpuRatio * 100).toFixed(1)}%`,
      String(r.errors),
      String(r.non2xx),
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows
    .map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join("  "))
    .join("\n");
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
