/**
 * `npm run bench`: what users run, measured. The real `benchdata serve` (the built CLI, webhook and billing
 * workers on) on memory:, sqlite: (a temp file) and postgres:// (a temp database, created and dropped), the
 * floor (a bare node:http handler answering a 300-byte JSON body) in its own process, and the load generator
 * (autocannon, 50 connections) in a third. Every target run sits next to a floor run in the same round, and
 * its ratio is its req/s over the mean of the floor runs just before and after it; the result is the median
 * of those ratios over rounds. Target order is reversed every other round, so drift hits all alike.
 *
 * Shapes (one server per store, seeded once over the admin and console APIs: 4 enterprise accounts × 50
 * test keys, limits raised by a config file so that nothing is ever refused):
 *   hot      2 keys of one account over 50 connections (a customer's backend); a fresh pair each round only
 *            while the CLI caps a key below the 1,000,000/min asked for
 *   spread   all 200 keys
 *   20 keys  PostgreSQL only: the 20 keys of one account
 * Request: GET /data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5, Host
 * sandbox.localhost (the default `target: host` config sends it to the test environment).
 *
 *   npm run bench                 full: 5 rounds × 5 s (+1 s warm-up) per target, ~8 min
 *   npm run bench -- --quick      3 rounds × 2 s (+1 s warm-up), ~3 min
 *   npm run bench -- --profile [--store=memory|sqlite] [--shape=hot|spread]
 *                                 serve (memory by default), under `node --cpu-prof`: where a request's µs go
 *   npm run bench -- --instructions [--store=memory|sqlite] [--shape=hot|spread] [--requests=N]
 *                                 the floor and serve (memory by default) under callgrind: instructions per request (robust on a
 *                                 shared machine) and the functions they go to, JIT code named via --perf-basic-prof
 *   --stores=memory,sqlite,postgres   --rounds=N   --seconds=N   --warmup=N   --connections=N
 *   BENCH_SOURCE_NOTE="…"         a line for the report; BENCH_NO_BUILD=1 skips the stale-build check
 *
 * Writes bench/results/cli-latest.md and cli-latest.json (bench/results is git-ignored).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { type CliServer, seedOverHttp, startCliServer } from "./lib/cli-server.ts";
import { repoRoot, startTarget, type RunningTarget } from "./lib/http-target.ts";
import { type LoadProcess, startLoadProcess } from "./lib/load-process.ts";
import type { LoadRequest } from "./lib/measure-load.ts";
import { cpuMsOfCommand, loadAverage } from "./lib/process-cpu.ts";
import { type CpuProfile, requestBreakdown } from "./lib/cpu-profile-breakdown.ts";
import { selfCosts } from "./lib/callgrind-jit.ts";
import { createTestDatabase, pgReachable } from "../packages/storage-kysely/src/test-support/pg-test-database.ts";

const PATH = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5";
const HOST = "sandbox.localhost";
const ADMIN_TOKEN = "bench-admin-token-0123456789abcdefghij";
const ACCOUNTS = 4;
const KEYS_PER_ACCOUNT = 50;
/** Per-key per-minute limit asked for; if the CLI refuses it (the cap), the cap is used and the report says so. */
const WANTED_PER_MINUTE = 1_000_000;
const FALLBACK_PER_MINUTE = 100_000;

type Store = "memory" | "sqlite" | "postgres";
type Shape = "hot" | "spread" | "20 keys";

interface Settings {
  quick: boolean;
  profile: boolean;
  rounds: number;
  seconds: number;
  warmup: number;
  connections: number;
  stores: Store[];
}

function settings(argv: string[]): Settings {
  const flag = (name: string): string | undefined => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))?.split("=")[1];
  const has = (name: string): boolean => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const num = (name: string, fallback: number): number => {
    const v = Number(flag(name));
    return Number.isFinite(v) && v > 0 ? v : fallback;
  };
  const quick = has("quick") || process.env.BENCH_QUICK === "1";
  const stores = (flag("stores")?.split(",") ?? ["memory", "sqlite", "postgres"]).filter((s): s is Store => s === "memory" || s === "sqlite" || s === "postgres");
  return {
    quick,
    profile: has("profile"),
    rounds: Math.round(num("rounds", quick ? 3 : 5)),
    seconds: Math.round(num("seconds", quick ? 2 : 5)),
    warmup: Math.round(num("warmup", 1)),
    connections: Math.round(num("connections", 50)),
    stores,
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const clock = (): string => new Date().toISOString().slice(11, 19);
const load = (): string => loadAverage()?.map((x) => x.toFixed(2)).join(" ") ?? "?";

// ---- the build ------------------------------------------------------------------------------------------

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path));
    else if (!entry.name.endsWith(".test.ts")) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

/** The CLI runs the built packages: rebuild when a source file is newer than its package's build. */
function ensureBuilt(): void {
  if (process.env.BENCH_NO_BUILD === "1") return;
  const stale = ["core", "storage-kysely", "adapter-node"].filter((p) => {
    const dist = join(repoRoot, "packages", p, "dist");
    try {
      return newest(join(repoRoot, "packages", p, "src")) > Math.min(...readdirSync(dist).filter((f) => f.endsWith(".js")).map((f) => statSync(join(dist, f)).mtimeMs));
    } catch {
      return true;
    }
  });
  if (stale.length === 0) return;
  log(`${clock()} building (${stale.join(", ")} changed since the last build)…`);
  const r = spawnSync("npm", ["run", "build"], { cwd: repoRoot, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error("npm run build failed");
}

// ---- servers --------------------------------------------------------------------------------------------

interface StoreServer {
  store: Store;
  server: CliServer;
  keys: string[];
  perMinute: number;
}

function writeConfig(dir: string, perMinute: number): string {
  const file = join(dir, `config-${perMinute}.json`);
  // The CLI's defaults (target "host", workers on) except the enterprise tier's limits, raised so that the
  // load is never refused: a refusal is cheaper than an answer and would flatter the figure.
  writeFileSync(file, JSON.stringify({ tiers: { enterprise: { perMinute, perDay: 2_147_483_647 } } }, null, 2));
  return file;
}

async function startStore(store: Store, db: string, tmp: string, launch: { nodeArgs?: string[]; wrapper?: string[] } = {}): Promise<StoreServer> {
  const started = Date.now();
  log(`${clock()} ${store}: starting benchdata serve --db ${db.replace(/\/\/[^@]*@/, "//…@")}`);
  let perMinute = WANTED_PER_MINUTE;
  let server: CliServer;
  try {
    server = await startCliServer({ db, configFile: writeConfig(tmp, perMinute), adminToken: ADMIN_TOKEN, ...launch });
  } catch (error) {
    if (!String(error).includes("perMinute")) throw error;
    perMinute = FALLBACK_PER_MINUTE;
    log(`${clock()} ${store}: the CLI refuses perMinute ${WANTED_PER_MINUTE.toLocaleString("en")}; using its cap, ${perMinute.toLocaleString("en")}`);
    server = await startCliServer({ db, configFile: writeConfig(tmp, perMinute), adminToken: ADMIN_TOKEN, ...launch });
  }
  log(`${clock()} ${store}: listening on ${server.url} (pid ${server.pid}) after ${Date.now() - started} ms; seeding ${ACCOUNTS} accounts × ${KEYS_PER_ACCOUNT} keys`);
  const seeded = Date.now();
  let shown = 0;
  const keys = await seedOverHttp({
    url: server.url,
    adminToken: ADMIN_TOKEN,
    accounts: ACCOUNTS,
    keysPerAccount: KEYS_PER_ACCOUNT,
    progress: (done, total) => {
      if (done - shown >= 50 || done === total) {
        shown = done;
        log(`${clock()} ${store}: seeded ${done}/${total} keys`);
      }
    },
  });
  log(`${clock()} ${store}: seeding took ${Date.now() - seeded} ms`);
  // One answer checked before anything is measured: a wrong answer would post a meaningless number.
  const probe = await get(server.port, PATH, { authorization: `Bearer ${keys[0]}`, host: HOST });
  if (probe.status !== 200) throw new Error(`${store}: the probe answered ${probe.status} ${probe.body}`);
  log(`${clock()} ${store}: probe 200, ${probe.body.length} bytes, x-ratelimit-limit ${probe.headers["x-ratelimit-limit"]}`);
  return { store, server, keys, perMinute };
}

/** One GET through node:http (fetch may not set Host). */
function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpGet({ host: "127.0.0.1", port, path, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    request.on("error", reject);
  });
}

// ---- rounds ---------------------------------------------------------------------------------------------

interface Target {
  name: string;
  store: Store | "floor";
  shape: Shape | null;
  url: string;
  /** The requests of a run in round `round` (1-based). */
  requests(round: number): LoadRequest[];
  cpuMs(): number | null;
  sideCpuMs?: () => number | null;
}

interface Run {
  round: number;
  at: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  serverCpuMicrosPerRequest: number | null;
  dbCpuMicrosPerRequest: number | null;
  clientCpuMicrosPerRequest: number;
  /** Target runs only: req/s over the mean of the neighbouring floor runs. */
  ratio?: number;
  floorRequestsPerSecond?: number;
}

/**
 * The keys a shape uses in a round. Hot: the same 2 keys in every round, unless the CLI caps a key's per-minute
 * limit below what a minute of hot load needs (then a fresh pair of the same account each round, so that a
 * key's window holds at most one run's requests and nothing is refused; the report says so).
 */
function shapeKeys(s: StoreServer, shape: Shape, round: number): string[] {
  if (shape === "hot") {
    const pair = s.perMinute < WANTED_PER_MINUTE ? (round - 1) % (KEYS_PER_ACCOUNT / 2) : 0;
    return s.keys.slice(2 * pair, 2 * pair + 2);
  }
  if (shape === "20 keys") return s.keys.slice(0, 20);
  return s.keys;
}

function targetsOf(s: StoreServer): Target[] {
  const shapes: Shape[] = s.store === "postgres" ? ["hot", "spread", "20 keys"] : ["hot", "spread"];
  return shapes.map((shape) => ({
    name: `${s.store}, ${shape}`,
    store: s.store,
    shape,
    url: s.server.url,
    requests: (round: number) => shapeKeys(s, shape, round).map((key) => ({ method: "GET", path: PATH, headers: { authorization: `Bearer ${key}`, host: HOST } })),
    cpuMs: () => s.server.cpuMs(),
    ...(s.store === "postgres" ? { sideCpuMs: () => cpuMsOfCommand("postgres") } : {}),
  }));
}

async function measure(generator: LoadProcess, target: Target, set: Settings, round: number): Promise<Run> {
  const requests = target.requests(round);
  const base = { url: target.url + (requests[0]?.path ?? "/"), connections: set.connections, requests };
  if (set.warmup > 0) await generator.run({ ...base, seconds: set.warmup });
  const cpu0 = target.cpuMs();
  const side0 = target.sideCpuMs?.() ?? null;
  const r = await generator.run({ ...base, seconds: set.seconds });
  const side1 = target.sideCpuMs?.() ?? null;
  const cpu1 = target.cpuMs();
  const per = (a: number | null, b: number | null): number | null => (a === null || b === null || r.total === 0 ? null : ((b - a) * 1000) / r.total);
  return {
    round,
    at: clock(),
    requestsPerSecond: r.requestsPerSecond,
    p50: r.p50,
    p99: r.p99,
    total: r.total,
    non2xx: r.non2xx,
    errors: r.errors,
    statusCodes: r.statusCodes,
    serverCpuMicrosPerRequest: per(cpu0, cpu1),
    dbCpuMicrosPerRequest: per(side0, side1),
    clientCpuMicrosPerRequest: r.clientCpuMicrosPerRequest,
  };
}

/** F T T F T T F … F: every target next to a floor run; each target's floor is the mean of the nearest floor runs before and after. */
function sequence(targets: Target[], floor: Target): Target[] {
  const out: Target[] = [floor];
  targets.forEach((t, i) => {
    out.push(t);
    if (i % 2 === 1 || i === targets.length - 1) out.push(floor);
  });
  return out;
}

function median(values: number[]): number | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length / 2;
  return Number.isInteger(m) ? ((v[m - 1] as number) + (v[m] as number)) / 2 : (v[Math.floor(m)] as number);
}

// ---- report ---------------------------------------------------------------------------------------------

interface Summary {
  name: string;
  store: Store;
  shape: Shape;
  ratio: number | null;
  requestsPerSecond: number | null;
  floorRequestsPerSecond: number | null;
  p50: number | null;
  p99: number | null;
  serverCpuMicrosPerRequest: number | null;
  floorCpuMicrosPerRequest: number | null;
  dbCpuMicrosPerRequest: number | null;
  non2xxShare: number;
  runs: Run[];
}

interface Check {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

const fmt = (x: number | null, digits = 2): string => (x === null ? "–" : x.toFixed(digits));
const int = (x: number | null): string => (x === null ? "–" : Math.round(x).toLocaleString("en"));

function summarise(target: Target, runs: Run[], floorRuns: Run[]): Summary {
  const pick = (f: (r: Run) => number | null | undefined): number | null => median(runs.map(f).filter((x): x is number => typeof x === "number"));
  return {
    name: target.name,
    store: target.store as Store,
    shape: target.shape as Shape,
    ratio: pick((r) => r.ratio),
    requestsPerSecond: pick((r) => r.requestsPerSecond),
    floorRequestsPerSecond: pick((r) => r.floorRequestsPerSecond),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    serverCpuMicrosPerRequest: pick((r) => r.serverCpuMicrosPerRequest),
    floorCpuMicrosPerRequest: median(floorRuns.map((r) => r.serverCpuMicrosPerRequest).filter((x): x is number => x !== null)),
    dbCpuMicrosPerRequest: pick((r) => r.dbCpuMicrosPerRequest),
    non2xxShare: runs.reduce((n, r) => n + r.non2xx + r.errors, 0) / Math.max(1, runs.reduce((n, r) => n + r.total, 0)),
    runs,
  };
}

function checks(summaries: Summary[], roundsHotOverSpread: Map<Store, number | null>): Check[] {
  const out: Check[] = [];
  const get = (store: Store, shape: Shape): Summary | undefined => summaries.find((s) => s.store === store && s.shape === shape);
  const goal = (store: Store, shape: Shape, min: number): void => {
    const s = get(store, shape);
    if (s === undefined) return;
    out.push({ what: `${store}, ${shape}`, goal: `≥ ${min.toFixed(2)} of the floor`, measured: fmt(s.ratio), met: s.ratio === null ? null : s.ratio >= min });
  };
  goal("memory", "hot", 0.6);
  goal("memory", "spread", 0.6);
  goal("sqlite", "hot", 0.4);
  goal("sqlite", "spread", 0.4);
  goal("postgres", "20 keys", 0.2);
  for (const [store, hs] of roundsHotOverSpread) {
    out.push({ what: `${store}: hot ÷ spread`, goal: "≥ 0.90", measured: fmt(hs), met: hs === null ? null : hs >= 0.9 });
  }
  for (const s of summaries) {
    out.push({ what: `${s.name}: answered 200`, goal: "100% (a refusal would flatter the figure)", measured: `${(100 * (1 - s.non2xxShare)).toFixed(3)}%`, met: s.non2xxShare === 0 });
  }
  return out;
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

interface Report {
  startedAt: string;
  minutes: number;
  settings: Settings;
  machine: { cpu: string; cores: number; node: string; postgres: string | null; commit: string | null; dirty: boolean };
  loadAverage: { start: string; end: string; byRound: string[] };
  perMinute: number;
  notes: string[];
  floor: { requestsPerSecond: number | null; cpuMicrosPerRequest: number | null; runs: Run[] };
  results: Summary[];
  hotOverSpread: Record<string, number | null>;
  checks: Check[];
}

function format(r: Report): string {
  const parts: string[] = [];
  parts.push(`# benchdata serve vs the node:http floor (${r.startedAt})`);
  parts.push(
    `${r.machine.cpu}, ${r.machine.cores} cores; Node ${r.machine.node}; PostgreSQL ${r.machine.postgres ?? "–"}; commit ${r.machine.commit ?? "?"}${r.machine.dirty ? " + uncommitted changes" : ""}. ` +
      `${r.settings.quick ? "Quick" : "Full"} run: ${r.settings.rounds} rounds × ${r.settings.seconds} s (+${r.settings.warmup} s warm-up), ${r.settings.connections} connections; took ${r.minutes.toFixed(1)} min. ` +
      `Load average (1/5/15 min) at the start ${r.loadAverage.start}, at the end ${r.loadAverage.end}; per round: ${r.loadAverage.byRound.join("; ")}.`,
  );
  for (const note of r.notes) parts.push(`Note: ${note}`);
  parts.push(
    table(
      ["store", "shape", "ratio to floor (median of rounds)", "req/s", "floor req/s", "p50 ms", "p99 ms", "server CPU µs/req", "DB CPU µs/req", "ratios by round"],
      r.results.map((s) => [
        s.store,
        s.shape,
        `**${fmt(s.ratio)}**`,
        int(s.requestsPerSecond),
        int(s.floorRequestsPerSecond),
        fmt(s.p50, 0),
        fmt(s.p99, 0),
        fmt(s.serverCpuMicrosPerRequest, 0),
        fmt(s.dbCpuMicrosPerRequest, 0),
        s.runs.map((run) => fmt(run.ratio ?? null)).join(" / "),
      ]),
    ),
  );
  parts.push(
    `Floor: ${int(r.floor.requestsPerSecond)} req/s (median run), ${fmt(r.floor.cpuMicrosPerRequest, 1)} µs CPU per request. ` +
      `Hot ÷ spread (median of same-round ratios): ${Object.entries(r.hotOverSpread).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}. ` +
      `Per-key limit ${r.perMinute.toLocaleString("en")}/min.`,
  );
  parts.push(table(["target", "goal", "measured", "met"], r.checks.map((c) => [c.what, c.goal, c.measured, c.met === null ? "n/a" : c.met ? "yes" : "**no**"])));
  return parts.join("\n\n");
}

function machine(): Report["machine"] {
  const cpuinfo = (() => {
    try {
      return readFileSync("/proc/cpuinfo", "utf8");
    } catch {
      return "";
    }
  })();
  const pg = spawnSync("psql", ["-At", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c", "SHOW server_version"], { encoding: "utf8" });
  const git = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
  const dirty = spawnSync("git", ["status", "--porcelain", "--", "packages"], { cwd: repoRoot, encoding: "utf8" });
  return {
    cpu: (/^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown").trim(),
    cores: cpus().length,
    node: process.version,
    postgres: pg.status === 0 ? pg.stdout.trim() : null,
    commit: git.status === 0 ? git.stdout.trim() : null,
    dirty: dirty.status === 0 && dirty.stdout.trim() !== "",
  };
}

// ---- profile mode ---------------------------------------------------------------------------------------

/** The store `--profile` and `--instructions` look at: `--store=memory` (the default) or `--store=sqlite` (a temp file). */
function measuredStore(tmp: string, mode: string): { store: Store; db: string } {
  const store = (process.argv.find((a) => a.startsWith("--store="))?.slice(8) ?? "memory") as Store;
  if (store !== "memory" && store !== "sqlite") throw new Error(`${mode} measures memory or sqlite, not ${store}`);
  return { store, db: store === "memory" ? "memory:" : `sqlite:${join(tmp, `${mode.slice(2)}.db`)}` };
}

async function profile(set: Settings, tmp: string, generator: LoadProcess): Promise<void> {
  const dir = join(tmp, "profile");
  mkdirSync(dir);
  const { store, db } = measuredStore(tmp, "--profile");
  const s = await startStore(store, db, tmp, { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "250"] });
  const shape = (process.argv.find((a) => a.startsWith("--shape="))?.slice(8) ?? "hot") as Shape;
  const hot = targetsOf(s).find((t) => t.shape === shape);
  if (hot === undefined) throw new Error(`no shape ${shape}`);
  const seconds = Math.max(set.seconds, 10);
  const base = { url: s.server.url + PATH, connections: set.connections, requests: (hot as Target).requests(1) };
  log(`${clock()} profile: warming up ${set.warmup + 2} s`);
  await generator.run({ ...base, seconds: set.warmup + 2 });
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpu0 = s.server.cpuMs();
  log(`${clock()} profile: loading the ${shape} shape for ${seconds} s (load ${load()})`);
  const r = await generator.run({ ...base, seconds });
  const cpu1 = s.server.cpuMs();
  const to = Number(process.hrtime.bigint() / 1000n);
  await s.server.stop();
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile") && f.includes(`.${s.server.pid}.`));
  if (file === undefined) throw new Error("no .cpuprofile written");
  const cpuPerRequest = cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / r.total;
  const parsed = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile & { endTime: number };
  log(`${clock()} profile: ${parsed.samples.length} samples from ${parsed.startTime} to ${parsed.endTime} µs; load from ${from} to ${to}`);
  const breakdown = requestBreakdown(parsed, { from, to, requests: r.total, cpuMicrosPerRequest: cpuPerRequest });
  const text =
    `# Where a request's CPU goes: benchdata serve --db ${store}, ${shape} shape (${new Date().toISOString()}, load ${load()})\n\n` +
    `${Math.round(r.requestsPerSecond)} req/s under the profiler (250 µs sampling), ${fmt(cpuPerRequest, 1)} µs server CPU per request (from /proc), ` +
    `${r.non2xx + r.errors} of ${r.total.toLocaleString("en")} answers not 2xx. ` +
    `Samples taken during the measured ${seconds} s only.\n\n` +
    breakdown;
  console.log(text);
  mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
  writeFileSync(join(repoRoot, "bench/results/cli-profile.md"), `${text}\n`);
  writeFileSync(join(repoRoot, "bench/results/cli-profile.cpuprofile"), readFileSync(join(dir, file)));
  log(`\nwritten: bench/results/cli-profile.md and cli-profile.cpuprofile (open it in Chrome DevTools)`);
}

// ---- instructions mode --------------------------------------------------------------------------------

/** Instructions a process executed while `work` ran (callgrind, instrumentation switched on only for it). */
async function instructionsDuring(pid: number, dir: string, work: () => Promise<void>, keepAs?: string): Promise<number> {
  const control = (...args: string[]): void => {
    const r = spawnSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`callgrind_control ${args.join(" ")} failed: ${r.stderr}`);
  };
  control("-z");
  control("-i", "on");
  await work();
  control("-d");
  control("-i", "off");
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`callgrind.out.${pid}.`)).sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const last = dumps.at(-1);
  if (last === undefined) throw new Error("no callgrind dump");
  const totals = /^totals:\s*(\d+)/m.exec(readFileSync(join(dir, last), "utf8"));
  if (keepAs !== undefined) writeFileSync(keepAs, readFileSync(join(dir, last)));
  rmSync(join(dir, last));
  if (totals === null) throw new Error(`no totals in ${last}`);
  return Number(totals[1]);
}

/**
 * `--instructions`: the floor and `benchdata serve --db memory:` under valgrind's callgrind, instructions per
 * request over a fixed number of requests after a warm-up. Instruction counts do not depend on what else the
 * machine runs, so they compare commits on a busy machine where req/s cannot.
 */
async function instructions(set: Settings, tmp: string, generator: LoadProcess): Promise<void> {
  const dir = join(tmp, "callgrind");
  mkdirSync(dir);
  const wrapper = ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`];
  const amount = Math.round(Number(process.argv.find((a) => a.startsWith("--requests="))?.slice(11) ?? 5000));
  const connections = 10;
  const lines: string[] = [];
  const measureOne = async (name: string, pid: number, url: string, requests: LoadRequest[]): Promise<number> => {
    const base = { url, connections, requests, seconds: 0 };
    log(`${clock()} ${name}: warming up (${amount} requests under valgrind)`);
    await generator.run({ ...base, amount });
    await generator.run({ ...base, amount });
    log(`${clock()} ${name}: counting ${amount} requests`);
    let result: { non2xx: number; errors: number } = { non2xx: 0, errors: 0 };
    mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
    const keep = join(repoRoot, `bench/results/callgrind-${name.replace(/[^a-z0-9]+/gi, "-")}.out`);
    const ir = await instructionsDuring(pid, dir, async () => {
      result = await generator.run({ ...base, amount });
    }, keep);
    if (result.non2xx + result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    const per = ir / amount;
    log(`${clock()} ${name}: ${Math.round(per).toLocaleString("en")} instructions per request`);
    return per;
  };
  const floorServer = await startTarget({ name: "floor", script: "bench/lib/target-node-floor.ts", wrapper });
  let floor: number;
  try {
    floor = await measureOne("floor", floorServer.pid as number, floorServer.url + "/", [{ method: "GET", path: "/" }]);
  } finally {
    await floorServer.stop();
  }
  const shape = (process.argv.find((a) => a.startsWith("--shape="))?.slice(8) ?? "spread") as Shape;
  const startedAt = Date.now();
  // --perf-basic-prof: V8 writes /tmp/perf-<pid>.map, which names the JIT code callgrind sees only as addresses.
  const { store, db } = measuredStore(tmp, "--instructions");
  const s = await startStore(store, db, tmp, { wrapper, nodeArgs: ["--perf-basic-prof", "--no-logfile-per-isolate", `--logfile=${join(dir, "v8.log")}`] });
  let served: number;
  let top = "";
  try {
    const target = targetsOf(s).find((t) => t.shape === shape) as Target;
    served = await measureOne(`${store}, ${shape}`, s.server.pid, s.server.url + PATH, target.requests(1));
    const dump = join(repoRoot, `bench/results/callgrind-${store}-${shape.replace(/[^a-z0-9]+/gi, "-")}.out`);
    const map = `/tmp/perf-${s.server.pid}.map`;
    const costs = selfCosts(dump, existsSync(map) ? map : null);
    const rows = [...costs].sort((a, b) => b[1] - a[1]).slice(0, 40);
    top = table(["function (self)", "instructions per request", "share"], rows.map(([name, ir]) => [name.replace(/\|/g, "\\|").slice(0, 110), Math.round(ir / amount).toLocaleString("en"), `${((100 * ir) / (served * amount)).toFixed(1)}%`]));
    // Kept beside the dump (callgrind-jit.ts reads both), and not left in /tmp: neither this one nor those of
    // the server's child processes (which inherit the flag), recognised by this checkout's path inside.
    if (existsSync(map)) writeFileSync(dump.replace(/\.out$/, ".map"), readFileSync(map));
    for (const file of readdirSync("/tmp").filter((f) => /^perf-\d+\.map$/.test(f))) {
      const path = join("/tmp", file);
      if (statSync(path).mtimeMs >= startedAt && readFileSync(path, "utf8").includes(repoRoot)) rmSync(path);
    }
  } finally {
    await s.server.stop();
  }
  lines.push(
    `# Instructions per request (callgrind, ${amount} requests after ${2 * amount} of warm-up, ${connections} connections; ${new Date().toISOString()})`,
    "",
    "| server | instructions per request | ratio to the floor's |",
    "|---|---:|---:|",
    `| node:http floor | ${Math.round(floor).toLocaleString("en")} | 1.00 |`,
    `| benchdata serve --db ${store === "memory" ? "memory:" : "sqlite:"}, ${shape} | ${Math.round(served).toLocaleString("en")} | ${(floor / served).toFixed(3)} |`,
    "",
    "The dumps are kept in bench/results/callgrind-*.out (`callgrind_annotate` reads them; JIT code is named by",
    "`npx tsx bench/lib/callgrind-jit.ts <dump> <perf map>`, as below).",
    "",
    `## benchdata serve on ${store}, ${shape}: the 40 functions with the most instructions of their own`,
    "",
    top,
  );
  const text = lines.join("\n");
  console.log(`\n${text}`);
  mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
  writeFileSync(join(repoRoot, "bench/results/cli-instructions.md"), `${text}\n`);
}

// ---- main -----------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const set = settings(process.argv.slice(2));
  const started = Date.now();
  ensureBuilt();
  const tmp = mkdtempSync(join(tmpdir(), "benchdata-cli-bench-"));
  const notes: string[] = process.env.BENCH_SOURCE_NOTE ? [process.env.BENCH_SOURCE_NOTE] : [];
  const servers: StoreServer[] = [];
  let floorServer: RunningTarget | null = null;
  let generator: LoadProcess | null = null;
  let pgDb: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
  try {
    log(`${clock()} load average ${load()}; starting the load generator`);
    generator = await startLoadProcess();
    if (set.profile) return await profile(set, tmp, generator);
    if (process.argv.includes("--instructions")) return await instructions(set, tmp, generator);
    floorServer = await startTarget({ name: "node:http floor", script: "bench/lib/target-node-floor.ts" });
    log(`${clock()} floor: listening on ${floorServer.url} (pid ${floorServer.pid})`);
    for (const store of set.stores) {
      let db: string;
      if (store === "memory") db = "memory:";
      else if (store === "sqlite") db = `sqlite:${join(tmp, "bench.db")}`;
      else {
        if (!(await pgReachable())) {
          notes.push("PostgreSQL unreachable: left out.");
          log(`${clock()} postgres: unreachable, left out`);
          continue;
        }
        pgDb = await createTestDatabase();
        log(`${clock()} postgres: created database ${pgDb.name}`);
        db = pgDb.url;
      }
      servers.push(await startStore(store, db, tmp));
    }
    const perMinute = Math.min(...servers.map((s) => s.perMinute));
    if (perMinute < WANTED_PER_MINUTE) notes.push(`the CLI caps a key at ${perMinute.toLocaleString("en")} requests per minute: a hot shape faster than ${Math.round((2 * perMinute) / 60).toLocaleString("en")} req/s would be refused, so the hot shape takes a fresh pair of keys each round (a key's window then holds at most one run's requests).`);

    const floor: Target = { name: "floor", store: "floor", shape: null, url: floorServer.url, requests: () => [{ method: "GET", path: "/" }], cpuMs: (floorServer as RunningTarget).cpuMs };
    const targets = servers.flatMap(targetsOf);
    const runs = new Map<Target, Run[]>([[floor, []], ...targets.map((t): [Target, Run[]] => [t, []])]);
    const byRound: string[] = [];
    const perRoundHotSpread = new Map<Store, number[]>();
    for (let round = 1; round <= set.rounds; round++) {
      byRound.push(`${clock()} ${load()}`);
      log(`\n${clock()} round ${round}/${set.rounds} (load average ${load()})`);
      const order = sequence(round % 2 === 0 ? [...targets].reverse() : targets, floor);
      const done: { target: Target; run: Run }[] = [];
      for (const target of order) {
        const run = await measure(generator, target, set, round);
        done.push({ target, run });
        (runs.get(target) as Run[]).push(run);
        const refused = run.non2xx + run.errors === 0 ? "" : `, ${run.non2xx} non-2xx + ${run.errors} errors ${JSON.stringify(run.statusCodes)}`;
        const db = run.dbCpuMicrosPerRequest === null ? "" : ` + ${run.dbCpuMicrosPerRequest.toFixed(0)} µs DB`;
        log(`${run.at}   ${target.name.padEnd(20)} ${Math.round(run.requestsPerSecond).toString().padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  ${fmt(run.serverCpuMicrosPerRequest, 0)} µs CPU/req${db}${refused}`);
      }
      // Ratios: each target run over the mean of the floor runs nearest before and after it in this round.
      const ratios = new Map<Target, number>();
      done.forEach(({ target, run }, i) => {
        if (target === floor) return;
        const before = done.slice(0, i).reverse().find((d) => d.target === floor)?.run;
        const after = done.slice(i + 1).find((d) => d.target === floor)?.run;
        const near = [before, after].filter((r): r is Run => r !== undefined);
        const floorRps = near.reduce((n, r) => n + r.requestsPerSecond, 0) / near.length;
        run.floorRequestsPerSecond = floorRps;
        run.ratio = run.requestsPerSecond / floorRps;
        ratios.set(target, run.ratio);
      });
      log(`${clock()} round ${round} ratios: ${targets.map((t) => `${t.name} ${fmt(ratios.get(t) ?? null)}`).join(", ")}`);
      for (const s of servers) {
        const [hot, spread] = targets.filter((t) => t.store === s.store);
        const h = hot && ratios.get(hot);
        const sp = spread && ratios.get(spread);
        if (h !== undefined && sp !== undefined) perRoundHotSpread.set(s.store, [...(perRoundHotSpread.get(s.store) ?? []), h / sp]);
      }
    }
    const floorRuns = runs.get(floor) as Run[];
    const results = targets.map((t) => summarise(t, runs.get(t) as Run[], floorRuns));
    const hotOverSpread = new Map<Store, number | null>(servers.map((s) => [s.store, median(perRoundHotSpread.get(s.store) ?? [])]));
    const report: Report = {
      startedAt: new Date(started).toISOString(),
      minutes: (Date.now() - started) / 60_000,
      settings: set,
      machine: machine(),
      loadAverage: { start: byRound[0]?.split(" ").slice(1).join(" ") ?? load(), end: load(), byRound },
      perMinute,
      notes,
      floor: {
        requestsPerSecond: median(floorRuns.map((r) => r.requestsPerSecond)),
        cpuMicrosPerRequest: median(floorRuns.map((r) => r.serverCpuMicrosPerRequest).filter((x): x is number => x !== null)),
        runs: floorRuns,
      },
      results,
      hotOverSpread: Object.fromEntries(hotOverSpread),
      checks: checks(results, hotOverSpread),
    };
    const text = format(report);
    console.log(`\n${text}`);
    const dir = join(repoRoot, "bench/results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cli-latest.json"), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(dir, "cli-latest.md"), `${text}\n`);
    log(`\nwritten: bench/results/cli-latest.md and cli-latest.json`);
  } finally {
    for (const s of servers) await s.server.stop();
    await floorServer?.stop();
    generator?.stop();
    if (pgDb !== null) {
      await pgDb.drop().then(
        () => log(`${clock()} postgres: dropped ${pgDb?.name}`),
        (error: unknown) => log(`could not drop ${pgDb?.name}: ${String(error)}`),
      );
    }
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
