/**
 * `npm run bench:micro`: the component benchmarks in one run (the headline, `npm run bench`, is bench/cli.bench.ts:
 * the real `benchdata serve` against the floor). Every benchmark in one run, one report (stdout, Markdown) and the same as JSON in
 * bench/results/latest.json.
 *
 *   HTTP at 50 connections, each server in its own process, rounds alternating the targets, every ratio
 *   paired with the node:http floor of the same round: floor, adapter-node static, the full pipeline on
 *   memory / SQLite / PostgreSQL storage, the full pipeline and static on Bun. Then the servers' CPU
 *   profiles under load by layer, the pipeline in-process (storage calls, allocation per request), HMAC
 *   signing, the statistics kernels, webhook delivery, the 1M-row import, and per-endpoint latency on a
 *   100,000-business dataset.
 *
 * Knobs (environment):
 *   BENCH_SECONDS (5)      measured seconds per HTTP run      BENCH_WARMUP (1)   unmeasured seconds before it
 *   BENCH_ROUNDS (5)       HTTP rounds                        BENCH_CONNECTIONS (50)
 *   BENCH_QUICK=1          200k-row import, 2 quarters and fewer requests in the query bench, 3 s runs
 *   BENCH_ONLY=a,b         sections to run: pipeline, hmac, stats, webhooks, import, query (default), http, profile (opt-in)
 *   BENCH_PG=0             leave PostgreSQL out (it is also left out, with a note, when unreachable)
 *   BENCHDATA_TEST_PG      the maintenance database used to create throwaway ones (postgres://postgres@127.0.0.1:5432/test)
 *   BENCH_SOURCE_NOTE      a line for the report saying what source was measured (e.g. a snapshot of a tree being edited)
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { formatHttpBench, type HttpBenchResult, runHttpBench } from "./http.bench.ts";
import type { HmacResult } from "./hmac.bench.ts";
import { type HttpTarget, repoRoot, startTarget, type TargetRequest } from "./lib/http-target.ts";
import { measureLoad } from "./lib/measure-load.ts";
import { cpuMsOfCommand, loadAverage } from "./lib/process-cpu.ts";
import { type BucketShare, type CpuProfile, profileBuckets, topFunctions } from "./lib/profile-buckets.ts";
import type { PipelineBenchResult } from "./pipeline.bench.ts";
import type { QueryBenchResult } from "./query.bench.ts";
import type { BenchResult as StatsResult } from "./stats.bench.ts";
import type { WebhooksBenchResult } from "./webhooks.bench.ts";
import type { ImportBenchResult } from "../packages/storage-kysely/bench/import.bench.ts";
import { createTestDatabase, pgReachable } from "../packages/storage-kysely/src/test-support/pg-test-database.ts";

const PIPELINE_PATH = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas";
const TSCONFIG = join(repoRoot, "bench/tsconfig.json");

function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const quick = process.env.BENCH_QUICK === "1";
const seconds = envNumber("BENCH_SECONDS", quick ? 3 : 5);
const warmupSeconds = envNumber("BENCH_WARMUP", 1);
const rounds = envNumber("BENCH_ROUNDS", quick ? 2 : 5);
const connections = envNumber("BENCH_CONNECTIONS", 50);
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
// The in-process HTTP targets (createApp without the CLI's workers, 500 keys) and their profiles are no longer
// the headline (bench/cli.bench.ts measures `benchdata serve` itself): they run only when asked for by name.
const OPT_IN = new Set(["http", "profile"]);
const wants = (section: string): boolean => (only === undefined ? !OPT_IN.has(section) : only.includes(section));
const log = (line: string): void => void process.stderr.write(`${line}\n`);

// ---- machine -------------------------------------------------------------------------------------------

interface Machine {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  node: string;
  bun: string | null;
  postgres: string | null;
  kernel: string;
  commit: string | null;
  dirtyTree: boolean;
}

function machine(): Machine {
  const cpuinfo = (() => {
    try {
      return readFileSync("/proc/cpuinfo", "utf8");
    } catch {
      return "";
    }
  })();
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const bun = spawnSync(join(repoRoot, "node_modules/.bin/bun"), ["--version"], { encoding: "utf8" });
  const pg = spawnSync("psql", ["-At", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c", "SHOW server_version"], { encoding: "utf8" });
  const git = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
  const dirty = spawnSync("git", ["status", "--porcelain"], { cwd: repoRoot, encoding: "utf8" });
  const mem = /^MemTotal:\s*(\d+)/m.exec((() => { try { return readFileSync("/proc/meminfo", "utf8"); } catch { return ""; } })());
  return {
    cpuModel: model.trim(),
    cores: cpus().length,
    memoryGb: mem ? Math.round(Number(mem[1]) / 1024 / 1024) : 0,
    node: process.version,
    bun: bun.status === 0 ? bun.stdout.trim() : null,
    postgres: pg.status === 0 ? pg.stdout.trim() : null,
    kernel: (() => { try { return readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(); } catch { return "unknown"; } })(),
    commit: git.status === 0 ? git.stdout.trim() : null,
    dirtyTree: dirty.status === 0 && dirty.stdout.trim() !== "",
  };
}

// ---- child-process benchmarks --------------------------------------------------------------------------

/** Runs bench/lib/child.ts <name> in a fresh Node process and returns its result. */
function runChild<T>(name: string, options: Record<string, unknown> = {}, execArgv: string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, "--import", "tsx", join(repoRoot, "bench/lib/child.ts"), name], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: "production", TSX_TSCONFIG_PATH: TSCONFIG, BENCH_CHILD_OPTIONS: JSON.stringify(options) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.once("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
      if (code === 0 && line !== undefined) resolve(JSON.parse(line.slice("BENCH_RESULT ".length)) as T);
      else reject(new Error(`${name} bench exited ${code}\n${out.slice(-2000)}`));
    });
  });
}

// ---- HTTP targets --------------------------------------------------------------------------------------

interface Setup {
  tmp: string;
  pgUrl: string | null;
  keys: number;
}

function keyedRequest(keysFile: string): () => TargetRequest {
  return () => {
    const keys = JSON.parse(readFileSync(keysFile, "utf8")) as string[];
    return { path: PIPELINE_PATH, requests: keys.map((key) => ({ method: "GET", path: PIPELINE_PATH, headers: { authorization: `Bearer ${key}` } })) };
  };
}

function httpTargets(setup: Setup): HttpTarget[] {
  const node = { TSX_TSCONFIG_PATH: TSCONFIG, BENCH_KEYS: String(setup.keys) };
  const app = (name: string, storage: string, extra: Record<string, string>, runtime: "node" | "bun" = "node"): HttpTarget => {
    const keysFile = join(setup.tmp, `keys-${storage}-${runtime}-${extra.BENCH_ENVIRONMENT ?? "test"}.json`);
    return {
      name,
      script: runtime === "bun" ? "bench/lib/target-bun-app.ts" : "bench/lib/target-node-app.ts",
      runtime,
      env: { ...node, BENCH_STORAGE: storage, BENCH_KEYS_FILE: keysFile, ...extra },
      request: keyedRequest(keysFile),
      ...(storage === "postgres" ? { sideCpuMs: () => cpuMsOfCommand("postgres") } : {}),
    };
  };
  const targets: HttpTarget[] = [
    { name: "node:http floor", script: "bench/lib/target-node-floor.ts", baseline: true },
    { name: "adapter-node static", script: "bench/lib/target-node-static.ts" },
    // Diagnostic: the bridge's share of a data request (headers read, four response headers, one await), no core.
    {
      name: "adapter-node, pipeline-shaped (no core)",
      script: "bench/lib/target-node-shaped.ts",
      request: { path: PIPELINE_PATH, headers: { authorization: `Bearer svc_test_${"a".repeat(48)}` } },
    },
    app("full pipeline, memory (node)", "memory", {}),
    app("full pipeline, SQLite (node)", "sqlite", { BENCH_SQLITE_DIR: setup.tmp }),
  ];
  if (setup.pgUrl !== null) {
    targets.push(app("full pipeline, PostgreSQL (node)", "postgres", { BENCH_DB_URL: setup.pgUrl }));
    // Paying traffic: live keys, so every admission also counts quota, and its batch commits synchronously.
    targets.push(app("full pipeline, PostgreSQL, live keys (node)", "postgres", { BENCH_DB_URL: setup.pgUrl, BENCH_ENVIRONMENT: "live" }));
  }
  targets.push(app("full pipeline, memory (Bun)", "memory", {}, "bun"));
  targets.push({ name: "adapter-bun static", script: "bench/lib/target-bun-static.ts", runtime: "bun" });
  // BENCH_TARGETS=SQLite,PostgreSQL: only targets whose names contain one of these (the floor always runs).
  const only = process.env.BENCH_TARGETS?.split(",").map((part) => part.trim()).filter((part) => part !== "");
  return only === undefined || only.length === 0 ? targets : targets.filter((t) => t.baseline === true || only.some((part) => t.name.includes(part)));
}

interface ServerProfile {
  target: string;
  requestsPerSecond: number;
  cpuMicrosPerRequest: number | null;
  buckets: BucketShare[];
  top: { name: string; share: number }[];
}

/** Loads one Node target with its V8 profiler on (after the warm-up) and splits its CPU time by layer. */
async function profileTarget(target: HttpTarget, tmp: string): Promise<ServerProfile> {
  const file = join(tmp, `profile-${target.name.replace(/[^a-z0-9]+/gi, "-")}.cpuprofile`);
  const running = await startTarget({ ...target, env: { ...target.env, BENCH_PROFILE_FILE: file } });
  let result;
  let cpu: number | null = null;
  try {
    const request = (typeof target.request === "function" ? target.request() : target.request) ?? {};
    const load = { ...request, url: running.url + (request.path ?? "/"), connections };
    await measureLoad({ ...load, seconds: warmupSeconds });
    process.kill(running.pid as number, "SIGUSR2");
    await new Promise((r) => setTimeout(r, 100));
    const before = running.cpuMs();
    result = await measureLoad({ ...load, seconds });
    const after = running.cpuMs();
    cpu = before === null || after === null ? null : ((after - before) * 1000) / result.total;
  } finally {
    await running.stop();
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  return { target: target.name, requestsPerSecond: result.requestsPerSecond, cpuMicrosPerRequest: cpu, buckets: profileBuckets(profile), top: topFunctions(profile, 12) };
}

// ---- the report ----------------------------------------------------------------------------------------

interface Check {
  target: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

interface Report {
  startedAt: string;
  durationSeconds: number;
  settings: { seconds: number; warmupSeconds: number; rounds: number; connections: number; quick: boolean; keysPerTarget: number };
  machine: Machine;
  loadAverage: Record<string, [number, number, number] | null>;
  notes: string[];
  http?: HttpBenchResult[];
  serverProfiles?: ServerProfile[];
  pipeline?: PipelineBenchResult;
  hmac?: HmacResult[];
  stats?: StatsResult[];
  webhooks?: WebhooksBenchResult;
  imports?: ImportBenchResult[];
  query?: QueryBenchResult;
  checks: Check[];
}

const formatRatio = (x: number): string => `${x >= 0.1 ? x.toFixed(2) : x.toPrecision(2)}×`;
const ratio = formatRatio;
const pct = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(digits)}%`);
const fix = (x: number | null | undefined, digits = 1): string => (x === null || x === undefined ? "–" : x.toFixed(digits));

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

function checks(report: Report): Check[] {
  const out: Check[] = [];
  const http = report.http ?? [];
  const find = (name: string): HttpBenchResult | undefined => http.find((r) => r.name === name);
  const goals: [string, number][] = [
    ["adapter-node static", 0.85],
    ["full pipeline, memory (node)", 0.6],
    ["full pipeline, SQLite (node)", 0.4],
    ["full pipeline, PostgreSQL (node)", 0.2],
  ];
  for (const [name, goal] of goals) {
    const r = find(name);
    if (r === undefined) continue;
    out.push({
      target: name,
      goal: `≥ ${goal * 100}% of the floor's req/s`,
      measured: `${pct(r.ratio)} req/s (CPU/request: ${pct(r.cpuRatio)} of the floor's efficiency)`,
      met: r.ratio === null ? null : r.ratio >= goal,
    });
  }
  for (const r of http) {
    out.push({ target: `${r.name}: answers`, goal: "≥ 99% 2xx", measured: `${pct(1 - r.non2xxShare, 2)} 2xx`, met: r.non2xxShare <= 0.01 });
  }
  for (const imp of report.imports ?? []) {
    out.push({
      target: `import ${imp.rows.toLocaleString("en")} rows, ${imp.store}`,
      goal: "< 60 s and < 500 MB peak RSS (for 1M rows)",
      measured: `${(imp.importMs / 1000).toFixed(1)} s, ${imp.peakRssMb.toFixed(0)} MB`,
      met: imp.rows < 1_000_000 ? null : imp.importMs < 60_000 && imp.peakRssMb < 500,
    });
  }
  const stats = report.stats ?? [];
  const cases = [...new Set(stats.filter((s) => s.impl === "ours").map((s) => `${s.op}|${s.size}`))];
  for (const c of cases) {
    const [op, size] = c.split("|") as [string, string];
    const ours = stats.find((s) => s.op === op && String(s.size) === size && s.impl === "ours");
    const peers = stats.filter((s) => s.op === op && String(s.size) === size && (s.impl === "d3-array" || s.impl === "plain-js"));
    if (!ours || peers.length === 0) continue;
    const fastest = Math.min(...peers.map((p) => p.nsPerOp));
    const ratio = ours.nsPerOp / fastest;
    out.push({ target: `stats: ${op}, n = ${Number(size).toLocaleString("en")}`, goal: "≤ 1.5× the fastest peer's time", measured: formatRatio(ratio), met: ratio <= 1.5 });
  }
  return out;
}

function formatReport(r: Report): string {
  const parts: string[] = [];
  const m = r.machine;
  parts.push(`# benchdata benchmarks (${r.startedAt})`);
  parts.push(
    `${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB; Linux ${m.kernel}; Node ${m.node}; Bun ${m.bun ?? "–"}; PostgreSQL ${m.postgres ?? "–"}; ` +
      `commit ${m.commit ?? "?"}${m.dirtyTree ? " + uncommitted changes" : ""}. Run took ${(r.durationSeconds / 60).toFixed(1)} min.`,
  );
  parts.push(`Load average (1/5/15 min): ${Object.entries(r.loadAverage).map(([k, v]) => `${k} ${v ? v.map((x) => x.toFixed(2)).join("/") : "–"}`).join("; ")}.`);
  for (const note of r.notes) parts.push(`Note: ${note}`);
  if (r.http) {
    const floor = r.http.find((h) => h.name === "node:http floor");
    parts.push(
      `## HTTP\n${r.settings.connections} connections, ${r.settings.rounds} rounds of ${r.settings.seconds} s (+${r.settings.warmupSeconds} s warm-up) per target, ` +
        `targets alternating (order reversed every other round), each server a fresh process; figures are the median round, ratios the median of same-round ratios to the floor. ` +
        `Keyed targets rotate ${r.settings.keysPerTarget} enterprise keys (1000/min each): test keys, but live keys on the "live keys" target, where every admission also counts quota. CPU is the server process's user + system time over the measured seconds; ` +
        `"DB" is PostgreSQL's processes' CPU over the same seconds.\n\n` +
        table(
          ["target", "req/s", "p50 ms", "p99 ms", "req/s vs floor", "CPU µs/req", "CPU vs floor", "DB CPU µs/req", "load generator CPU µs/req", "non-2xx", "req/s by round"],
          r.http.map((h) => [
            h.name,
            Math.round(h.requestsPerSecond).toLocaleString("en"),
            String(h.p50),
            String(h.p99),
            pct(h.ratio),
            fix(h.cpuMicrosPerRequest),
            pct(h.cpuRatio),
            fix(h.sideCpuMicrosPerRequest),
            fix(h.clientCpuMicrosPerRequest),
            pct(h.non2xxShare, 2),
            h.rounds.map((run) => Math.round(run.requestsPerSecond)).join(" / "),
          ]),
        ) +
        (floor ? "" : "\n\nThe floor failed: no ratios."),
    );
    const codes = r.http.map((h) => {
      const all: Record<string, number> = {};
      for (const run of h.rounds) for (const [code, n] of Object.entries(run.statusCodes)) all[code] = (all[code] ?? 0) + n;
      return `${h.name}: ${Object.entries(all).map(([c, n]) => `${c} × ${n.toLocaleString("en")}`).join(", ")}`;
    });
    parts.push(`Status codes over all measured rounds: ${codes.join("; ")}.`);
    for (const h of r.http) if (h.error) parts.push(`Failed: ${h.name}: ${h.error}`);
  }
  if (r.serverProfiles) {
    parts.push(
      "## Server CPU profiles under load\nOne extra run per Node target with V8's sampling profiler started after the warm-up. The sampler " +
        "takes wall-clock samples: time the server spends descheduled right after a syscall that woke the load generator (writev) " +
        "is counted in that frame, so on two shared cores the node-internals share overstates CPU. Native frames count toward " +
        "their JavaScript caller's layer (better-sqlite3's statement calls land on storage-kysely's code that made them).",
    );
    for (const p of r.serverProfiles) {
      parts.push(
        `### Server CPU by layer: ${p.target} (${Math.round(p.requestsPerSecond)} req/s, ${fix(p.cpuMicrosPerRequest)} µs CPU/req under the profiler)\n` +
          table(["layer", "share of samples", "≈ µs/req (share × CPU/req)"], p.buckets.filter((b) => b.share >= 0.005).map((b) => [b.bucket, pct(b.share), fix(p.cpuMicrosPerRequest === null ? null : b.share * p.cpuMicrosPerRequest)])) +
          `\n\nTop functions: ${p.top.slice(0, 8).map((t) => `${t.name} ${pct(t.share)}`).join("; ")}`,
      );
    }
  }
  if (r.pipeline) {
    const p = r.pipeline;
    parts.push(
      "## Pipeline in-process (app.fetch, no HTTP)\n" +
        table(
          ["storage", "µs/req at 50 in flight", "CPU µs/req", "DB CPU µs/req", "one at a time: full", "findKeyByHash", "admit", "/healthz", "no key (401)", "non-2xx"],
          p.stores.map((s) => [s.storage, fix(s.concurrentMicros), fix(s.cpuMicros), fix(s.dbCpuMicros), fix(s.sequential.full), fix(s.sequential.findKeyByHash), fix(s.sequential.admit), fix(s.sequential.healthz), fix(s.sequential.missingKey), String(s.non2xx)]),
        ) +
        "\n\nIn-process CPU by layer (memory): " +
        p.profile.filter((b) => b.share >= 0.005).map((b) => `${b.bucket} ${pct(b.share)}`).join("; ") +
        (p.postgres
          ? `\n\nPostgreSQL: a bare \`SELECT 1\` round trip (pg Pool, one at a time) takes ${fix(p.postgres.roundTrip.wallMicros)} µs, ` +
            `${fix(p.postgres.roundTrip.nodeCpuMicros)} µs of Node CPU and ${fix(p.postgres.roundTrip.dbCpuMicros)} µs of PostgreSQL CPU. ` +
            (p.postgres.statements
              ? `Storage's own statements re-sent one at a time on one connection: the key lookup ${fix(p.postgres.statements.findKeyUnnamed)} µs re-sent unnamed (parsed and planned every call; storage sends it named), ` +
                `${fix(p.postgres.statements.findKeyPrepared)} µs as a named prepared statement; admit ${fix(p.postgres.statements.admit)} µs, ` +
                `${fix(p.postgres.statements.admitAsyncCommit)} µs with synchronous_commit = off (the rest is waiting for the WAL flush). `
              : "") +
            `Diagnostic, synchronous_commit = off for the whole pipeline: ${fix(p.postgres.asyncCommit.concurrentMicros)} µs/req at 50 in flight ` +
            `(${fix(p.postgres.asyncCommit.cpuMicros)} µs Node CPU + ${fix(p.postgres.asyncCommit.dbCpuMicros)} µs DB CPU), admit one at a time ${fix(p.postgres.asyncCommit.sequential.admit)} µs.`
          : "") +
        `\n\nAllocated per request (memory, sampling heap profiler): ${Math.round(p.allocation.bytesPerRequest)} bytes; by site: ` +
        p.allocation.sites.slice(0, 10).map((s) => `${s.site} ${Math.round(s.bytesPerRequest)} B`).join("; "),
    );
  }
  if (r.hmac) {
    const rows: string[][] = [];
    for (const bytes of [...new Set(r.hmac.map((h) => h.bytes))]) {
      const noble = r.hmac.find((h) => h.bytes === bytes && h.impl === "@noble/hashes hmac");
      for (const h of r.hmac.filter((x) => x.bytes === bytes)) {
        rows.push([`${bytes / 1024} KB`, h.impl, Math.round(h.opsPerSec).toLocaleString("en"), fix(h.microsPerOp, 2), noble ? `${(h.opsPerSec / noble.opsPerSec).toFixed(2)}×` : "–"]);
      }
    }
    parts.push("## HMAC-SHA256 signing\n" + table(["body", "implementation", "ops/s", "µs/op", "vs @noble/hashes"], rows));
  }
  if (r.stats) {
    const rows: string[][] = [];
    const cases = [...new Set(r.stats.filter((s) => s.impl === "ours").map((s) => `${s.op}|${s.size}`))];
    for (const c of cases) {
      const [op, size] = c.split("|") as [string, string];
      const get = (impl: string): StatsResult | undefined => r.stats?.find((s) => s.op === op && String(s.size) === size && s.impl === impl);
      const ours = get("ours") as StatsResult;
      const d3 = get("d3-array");
      const plain = get("plain-js");
      const fastest = Math.min(...[d3, plain].filter((x): x is StatsResult => x !== undefined).map((x) => x.nsPerOp));
      const ns = (x: StatsResult | undefined): string => (x ? (x.nsPerOp >= 1e6 ? `${(x.nsPerOp / 1e6).toFixed(2)} ms` : x.nsPerOp >= 1e3 ? `${(x.nsPerOp / 1e3).toFixed(2)} µs` : `${x.nsPerOp.toFixed(0)} ns`) : "–");
      rows.push([op, Number(size).toLocaleString("en"), ns(ours), ns(d3), ns(plain), ratio(ours.nsPerOp / fastest)]);
    }
    parts.push("## Statistics kernels (per call, sorted sample)\n" + table(["operation", "n", "ours", "d3-array", "plain JS", "ours ÷ fastest peer"], rows));
  }
  if (r.webhooks) {
    const w = r.webhooks;
    parts.push(
      "## Webhook deliveries\n" +
        table(
          ["deliveries", "ordered", "concurrency per webhook", "seconds", "deliveries/s"],
          w.throughput.map((t) => [String(t.deliveries), t.ordered ? "yes" : "no", t.ordered ? "(1)" : String(t.concurrencyPerWebhook), t.seconds.toFixed(2), t.perSecond.toFixed(0)]),
        ) +
        "\n\n" +
        table(
          [`healthy receiver latency (time-out ${w.timeoutSeconds} s)`, "events", "p50 ms", "p99 ms", "max ms", "time-outs at the hanging receiver"],
          w.latency.map((l) => [l.scenario, String(l.events), l.p50Ms.toFixed(1), l.p99Ms.toFixed(1), l.maxMs.toFixed(1), String(l.hangingTimeouts)]),
        ),
    );
  }
  if (r.imports) {
    parts.push(
      "## Import\n" +
        table(
          ["store", "rows", "file MB", "cells", "seconds", "rows/s", "peak RSS MB"],
          r.imports.map((i) => [i.store, i.rows.toLocaleString("en"), i.fileMb.toFixed(1), i.summary.cells.toLocaleString("en"), (i.importMs / 1000).toFixed(1), Math.round(i.rowsPerSecond).toLocaleString("en"), i.peakRssMb.toFixed(0)]),
        ),
    );
  }
  if (r.query) {
    const q = r.query;
    parts.push(
      `## Query latency, ${q.businesses.toLocaleString("en")} businesses (SQLite, in-process app.fetch, live keys)\n` +
        `${q.rows.toLocaleString("en")} rows over ${q.quarters} quarters (${q.fileMb.toFixed(0)} MB CSV) imported into ${q.cells} cells in ${q.importSeconds.toFixed(1)} s.\n\n` +
        table(
          ["endpoint", "requests", "first (cold) µs", "p50 µs", "p99 µs", "mean µs", "bytes", "non-2xx"],
          q.endpoints.map((e) => [e.endpoint, String(e.requests), e.firstMicros.toFixed(0), e.p50Micros.toFixed(0), e.p99Micros.toFixed(0), e.meanMicros.toFixed(0), e.responseBytes.toFixed(0), String(e.non2xx)]),
        ),
    );
  }
  parts.push(
    "## Targets\n" +
      table(["target", "goal", "measured", "met"], r.checks.map((c) => [c.target, c.goal, c.measured, c.met === null ? "n/a" : c.met ? "yes" : "**no**"])),
  );
  return parts.join("\n\n");
}

// ---- main ----------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), "benchdata-bench-"));
  const keys = Math.max(500, Math.ceil(100 * (seconds + warmupSeconds + 2)));
  const report: Report = {
    startedAt: new Date(started).toISOString(),
    durationSeconds: 0,
    settings: { seconds, warmupSeconds, rounds, connections, quick, keysPerTarget: keys },
    machine: machine(),
    loadAverage: { start: loadAverage() },
    notes: process.env.BENCH_SOURCE_NOTE ? [process.env.BENCH_SOURCE_NOTE] : [],
    checks: [],
  };
  const section = async (name: string, run: () => Promise<void>): Promise<void> => {
    if (!wants(name)) return;
    report.loadAverage[name] = loadAverage();
    log(`\n== ${name} (load average ${report.loadAverage[name]?.join(" ") ?? "?"})`);
    const t = Date.now();
    try {
      await run();
    } catch (error) {
      report.notes.push(`${name} failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
      log(String(error instanceof Error ? error.stack : error));
    }
    log(`== ${name} done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  };

  const usePg = process.env.BENCH_PG !== "0" && (await pgReachable());
  if (!usePg) report.notes.push(process.env.BENCH_PG === "0" ? "PostgreSQL left out (BENCH_PG=0)." : "PostgreSQL unreachable: its figures are left out.");
  const pgDb = usePg && (wants("http") || wants("profile") || wants("pipeline")) ? await createTestDatabase() : null;
  const setup: Setup = { tmp, pgUrl: pgDb?.url ?? null, keys };

  try {
    await section("http", async () => {
      report.http = await runHttpBench(httpTargets(setup), { seconds, warmupSeconds, rounds, connections, log });
      log(formatHttpBench(report.http));
    });
    await section("profile", async () => {
      const targets = httpTargets(setup).filter((t) => t.runtime !== "bun");
      report.serverProfiles = [];
      for (const target of targets) {
        const p = await profileTarget(target, tmp);
        log(`${p.target}: ${p.buckets.slice(0, 6).map((b) => `${b.bucket} ${pct(b.share)}`).join("; ")}`);
        report.serverProfiles.push(p);
      }
    });
    await section("pipeline", async () => {
      report.pipeline = await runChild<PipelineBenchResult>("pipeline", { postgresUrl: setup.pgUrl, scale: quick ? 0.3 : 1 });
    });
    await section("hmac", async () => {
      report.hmac = await runChild<HmacResult[]>("hmac", quick ? { sampleMs: 60 } : {});
    });
    await section("stats", async () => {
      report.stats = await runChild<StatsResult[]>("stats");
    });
    await section("webhooks", async () => {
      report.webhooks = await runChild<WebhooksBenchResult>("webhooks", quick ? { deliveries: 2000, latencySeconds: 3 } : {});
    });
    await section("import", async () => {
      const rows = quick ? 200_000 : 1_000_000;
      report.imports = [await runChild<ImportBenchResult>("import", { rows })];
      if (usePg) report.imports.push(await runChild<ImportBenchResult>("import", { rows, postgres: true }));
    });
    await section("query", async () => {
      report.query = await runChild<QueryBenchResult>("query", quick ? { quarters: 2, requests: 1000 } : {});
    });
  } finally {
    await pgDb?.drop().catch((error: unknown) => report.notes.push(`could not drop ${pgDb.name}: ${String(error)}`));
    rmSync(tmp, { recursive: true, force: true });
  }

  report.loadAverage.end = loadAverage();
  report.durationSeconds = (Date.now() - started) / 1000;
  report.checks = checks(report);
  const text = formatReport(report);
  console.log(text);
  const dir = join(repoRoot, "bench/results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "latest.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, "latest.md"), `${text}\n`);
  log(`\nwritten: bench/results/latest.json, bench/results/latest.md`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
