/**
 * `npm run bench`: what users run, measured. The real `benchdata serve` (the built CLI, webhook and billing
 * workers on) on memory:, sqlite: (a temp file) and postgres:// (a temp database, created and dropped), under
 * each Node asked for (the machine's Node 20, and Node 24 from the npm registry, kept in a cache folder: SQLite runs
 * on node:sqlite there, so nothing is compiled for it), next
 * to the floor (a bare node:http handler answering a 300-byte JSON body) on the same Node, and the assembled
 * peer (Fastify + @fastify/rate-limit + a SHA-256 key table + a rank over the sorted sample:
 * bench/lib/target-peer.ts) on the same Node. Each server is a process of its own, and the load generator
 * (autocannon, 50 connections) a third. Every target run sits next to its Node's floor run in the same round,
 * and its ratio is its req/s over the mean of the floor runs just before and after it; its ratio to the peer
 * is that ratio over the peer's of the same Node, shape and round. Results are medians over rounds; the order
 * of the whole round is reversed every other round, so drift hits all alike.
 *
 * Shapes (one server per store and Node, seeded once over the admin and console APIs: 4 enterprise accounts ×
 * 50 test keys, limits raised by a config file so that nothing is ever refused; the peer gets 200 keys too):
 *   hot      2 keys of one account over 50 connections (a customer's backend)
 *   spread   20 keys of one account
 *   all      all 200 keys of the 4 accounts (the SQLite store writes each key's window once per batch)
 * Request: GET /data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5, Host
 * sandbox.localhost (the default `target: host` config sends it to the test environment: synthetic data).
 *
 *   npm run bench                 full: both Nodes, every store and the peer, hot and spread, 5 rounds × 5 s
 *   npm run bench -- --quick      3 rounds × 2 s (+1 s warm-up)
 *   npm run bench -- --nodes=24 --stores=sqlite,peer --shapes=hot --rounds=7     a subset, to measure a pair quickly
 *   npm run bench -- --profile [--node=20|24] [--store=memory|sqlite|postgres|peer] [--shape=hot|spread|all]
 *                                 one server under `node --cpu-prof`: where a request's µs go, by layer (source-mapped)
 *   npm run bench -- --instructions [--nodes=20,24] [--stores=memory,sqlite,postgres,peer] [--shape=…] [--requests=N]
 *                                 the floor and each server under callgrind: instructions per request (robust on a
 *                                 shared machine) and the functions they go to, JIT code named via --perf-basic-prof
 *   --stores=memory,sqlite,postgres,peer   --nodes=20,24   --shapes=hot,spread,all   --rounds=N   --seconds=N
 *   --warmup=N   --connections=N   --refresh-node (fetch the registry's Node again)
 *   --analytics=off               benchdata's servers count no usage analytics (config analytics.enabled: false)
 *   --analytics=both              each store twice, analytics on and off, measured next to each other in every round:
 *                                 what analytics cost, as alternating pairs (docs/benchmarks.md)
 *   --against=DIR                 each store also served by another checkout's build (DIR, built with its own
 *                                 `npm run build`), next to this one in every round: a change's before and after
 *   BENCH_SOURCE_NOTE="…"         a line for the report; BENCH_NO_BUILD=1 skips the stale-build check
 *
 * Writes bench/results/cli-latest.md and cli-latest.json (bench/results is git-ignored).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { cryptoRandom, generateApiKey } from "@benchdata/core";
import { type CliServer, seedOverHttp, startCliServer } from "./lib/cli-server.ts";
import { repoRoot, type RunningTarget, startTarget } from "./lib/http-target.ts";
import { type LoadProcess, startLoadProcess } from "./lib/load-process.ts";
import type { LoadRequest } from "./lib/measure-load.ts";
import { cpuMsOfPids, loadAverage, pgBackendPids } from "./lib/process-cpu.ts";
import { type CpuProfile, requestBreakdown } from "./lib/cpu-profile-breakdown.ts";
import { selfCosts } from "./lib/callgrind-jit.ts";
import { callgrindWrapper, instructionsDuring } from "./lib/callgrind.ts";
import { needsCompiledSqlite, nodeRuntime, type NodeRuntime } from "./lib/node-runtimes.ts";
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
/** What serves a target: one of benchdata's stores, or the assembled peer. */
type Kind = Store | "peer";
type Shape = "hot" | "spread" | "all";
const SHAPES: readonly Shape[] = ["hot", "spread", "all"];
const KINDS: readonly Kind[] = ["memory", "sqlite", "postgres", "peer"];
const SHAPE_LABEL: Record<Shape, string> = { hot: "hot (2 keys)", spread: "spread (20 keys)", all: "all 200 keys" };

/**
 * A second server of the same store, measured beside the default one in the same rounds: the report gives each
 * round's quotient of the two ratios (alternating pairs, since the order of a round flips every round).
 */
interface Variant {
  label: string;
  /** Another checkout's CLI entry (`--against`). */
  bin?: string;
  analyticsOff?: boolean;
}

interface Settings {
  quick: boolean;
  rounds: number;
  seconds: number;
  warmup: number;
  connections: number;
  stores: Kind[];
  nodes: number[];
  shapes: Shape[];
  variants: Variant[];
}

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))?.split("=")[1];
const has = (name: string): boolean => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));

function settings(): Settings {
  const num = (name: string, fallback: number): number => {
    const v = Number(flag(name));
    return Number.isFinite(v) && v > 0 ? v : fallback;
  };
  const quick = has("quick") || process.env.BENCH_QUICK === "1";
  const listOf = <T extends string>(name: string, all: readonly T[], fallback: readonly T[]): T[] => {
    const asked = flag(name)?.split(",");
    if (asked === undefined) return [...fallback];
    const unknown = asked.filter((x) => !all.includes(x as T));
    if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(", ")} (one of ${all.join(", ")})`);
    return asked as T[];
  };
  return {
    quick,
    rounds: Math.round(num("rounds", quick ? 3 : 5)),
    seconds: Math.round(num("seconds", quick ? 2 : 5)),
    warmup: Math.round(num("warmup", 1)),
    connections: Math.round(num("connections", 50)),
    stores: listOf("stores", KINDS, KINDS),
    nodes: (flag("nodes") ?? "20,24").split(",").map(Number),
    shapes: listOf("shapes", SHAPES, ["hot", "spread"]),
    variants: variants(),
  };
}

function variants(): Variant[] {
  const out: Variant[] = [];
  const analytics = flag("analytics");
  if (analytics !== undefined && analytics !== "on" && analytics !== "off" && analytics !== "both") throw new Error(`--analytics: on, off or both, not ${analytics}`);
  if (analytics === "both") out.push({ label: "analytics off", analyticsOff: true });
  const against = flag("against");
  if (against !== undefined) {
    // The CLI's entry moved from adapter-node to its own package (issue 28); either layout can be measured.
    const bin = ["packages/cli/bin/benchdata.js", "packages/adapter-node/bin/benchdata.js"].map((p) => join(against, p)).find((p) => existsSync(p));
    if (bin === undefined) throw new Error(`--against=${against}: no packages/cli/bin/benchdata.js or packages/adapter-node/bin/benchdata.js there`);
    // Named by its own commit only when DIR is a checkout itself (a clone's or a worktree's .git), never by a
    // repository it merely sits inside.
    const git = existsSync(join(against, ".git")) ? spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: against, encoding: "utf8" }) : null;
    out.push({ label: `before (${git !== null && git.status === 0 ? git.stdout.trim() : against})`, bin });
  }
  return out;
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
  const stale = ["core", "storage-kysely", "adapter-node", "adapter-bun", "adapter-deno", "console", "cli"].filter((p) => {
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

/** A server under load: benchdata serve on one store, or the peer, on one Node. */
interface Server {
  kind: Kind;
  node: NodeRuntime;
  url: string;
  pid: number;
  keys: string[];
  perMinute: number;
  cpuMs(): number | null;
  stop(): Promise<void>;
  /** PostgreSQL: the database whose backends' CPU is counted apart. */
  database?: string;
  /** Which variant of the store this server is; null for this checkout's default. */
  variant: string | null;
}

function writeConfig(dir: string, perMinute: number, analyticsOff: boolean): string {
  const file = join(dir, `config-${perMinute}${analyticsOff ? "-analytics-off" : ""}.json`);
  // The CLI's defaults (target "host", workers on) except the enterprise tier's limits, raised so that the
  // load is never refused: a refusal is cheaper than an answer and would flatter the figure. The analytics key
  // is written only when asked for, so that a build older than analytics reads the file too.
  const analytics = analyticsOff ? { analytics: { enabled: false } } : {};
  writeFileSync(file, JSON.stringify({ tiers: { enterprise: { perMinute, perDay: 2_147_483_647 } }, ...analytics }, null, 2));
  return file;
}

interface Launch {
  nodeArgs?: string[];
  wrapper?: string[];
}

/** Where a store's data lives for one server: a fresh SQLite file, or a fresh PostgreSQL database (dropped at the end). */
async function storeUrl(store: Store, tmp: string, node: NodeRuntime, cleanup: (() => Promise<void>)[]): Promise<{ db: string; database?: string } | null> {
  if (store === "memory") return { db: "memory:" };
  if (store === "sqlite") return { db: `sqlite:${join(tmp, `bench-node${node.major}-${Date.now()}.db`)}` };
  if (!(await pgReachable())) return null;
  const pg = await createTestDatabase();
  log(`${clock()} postgres: created database ${pg.name}`);
  cleanup.push(() =>
    pg.drop().then(
      () => log(`${clock()} postgres: dropped ${pg.name}`),
      (error: unknown) => log(`could not drop ${pg.name}: ${String(error)}`),
    ),
  );
  return { db: pg.url, database: pg.name };
}

async function startStore(store: Store, node: NodeRuntime, where: { db: string; database?: string }, tmp: string, launch: Launch = {}, variant: Variant | null = null): Promise<Server> {
  const started = Date.now();
  const name = `${store}${variant === null ? "" : ` [${variant.label}]`} on Node ${node.major}`;
  const analyticsOff = variant?.analyticsOff === true || flag("analytics") === "off";
  log(`${clock()} ${name}: starting benchdata serve --db ${where.db.replace(/\/\/[^@]*@/, "//…@")}`);
  let perMinute = WANTED_PER_MINUTE;
  let server: CliServer;
  const start = (limit: number): Promise<CliServer> =>
    startCliServer({ db: where.db, configFile: writeConfig(tmp, limit, analyticsOff), adminToken: ADMIN_TOKEN, node: node.bin, ...launch, ...(variant?.bin !== undefined ? { bin: variant.bin } : {}) });
  try {
    server = await start(perMinute);
  } catch (error) {
    if (!String(error).includes("perMinute")) throw error;
    perMinute = FALLBACK_PER_MINUTE;
    log(`${clock()} ${name}: the CLI refuses perMinute ${WANTED_PER_MINUTE.toLocaleString("en")}; using its cap, ${perMinute.toLocaleString("en")}`);
    server = await start(perMinute);
  }
  const driver = /"storage_driver":"([^"]+)"/.exec(server.output())?.[1] ?? "?";
  log(`${clock()} ${name}: listening on ${server.url} (pid ${server.pid}, storage driver ${driver}) after ${Date.now() - started} ms; seeding ${ACCOUNTS} accounts × ${KEYS_PER_ACCOUNT} keys`);
  const seeded = Date.now();
  let shown = 0;
  const keys = await seedOverHttp({
    url: server.url,
    adminToken: ADMIN_TOKEN,
    accounts: ACCOUNTS,
    keysPerAccount: KEYS_PER_ACCOUNT,
    progress: (done, total) => {
      if (done - shown >= 100 || done === total) {
        shown = done;
        log(`${clock()} ${name}: seeded ${done}/${total} keys`);
      }
    },
  });
  log(`${clock()} ${name}: seeding took ${Date.now() - seeded} ms`);
  const s: Server = {
    kind: store,
    variant: variant?.label ?? null,
    node,
    url: server.url,
    pid: server.pid,
    keys,
    perMinute,
    cpuMs: server.cpuMs,
    stop: server.stop,
    ...(where.database !== undefined ? { database: where.database } : {}),
  };
  await probe(name, s);
  return s;
}

/** The assembled peer on `node`, with 200 keys of benchdata's format (a JSON file it reads at start). */
async function startPeer(node: NodeRuntime, tmp: string, launch: Launch = {}): Promise<Server> {
  const keys = Array.from({ length: ACCOUNTS * KEYS_PER_ACCOUNT }, () => generateApiKey("test", cryptoRandom).raw);
  const keysFile = join(tmp, `peer-keys-node${node.major}.json`);
  writeFileSync(keysFile, JSON.stringify(keys));
  const t = await startTarget({ name: `peer on Node ${node.major}`, script: "bench/lib/target-peer.ts", node: node.bin, env: { BENCH_KEYS_FILE: keysFile }, ...launch });
  log(`${clock()} peer on Node ${node.major}: listening on ${t.url} (pid ${t.pid})`);
  const s: Server = { kind: "peer", variant: null, node, url: t.url, pid: t.pid as number, keys, perMinute: WANTED_PER_MINUTE, cpuMs: t.cpuMs, stop: t.stop };
  await probe(`peer on Node ${node.major}`, s);
  return s;
}

/** One answer checked before anything is measured: a wrong answer would post a meaningless number. */
async function probe(name: string, s: Server): Promise<void> {
  const answer = await get(s.url, PATH, { authorization: `Bearer ${s.keys[0]}`, host: HOST });
  if (answer.status !== 200) throw new Error(`${name}: the probe answered ${answer.status} ${answer.body}`);
  log(`${clock()} ${name}: probe 200, ${answer.body.length} bytes, x-ratelimit-limit ${answer.headers["x-ratelimit-limit"]}`);
}

/** One GET through node:http (fetch may not set Host). */
function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(base + path, { headers }, (response) => {
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
  kind: Kind | "floor";
  variant: string | null;
  node: NodeRuntime;
  shape: Shape | null;
  url: string;
  /** The requests of a run in round `round` (1-based). */
  requests(round: number): LoadRequest[];
  cpuMs(): number | null;
  /** CPU used on the target's behalf outside its process so far (PostgreSQL's backends), ms. */
  sideCpuMs?: () => (() => number | null) | null;
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
  /** Target runs only: req/s over the mean of the neighbouring floor runs of the same Node. */
  ratio?: number;
  floorRequestsPerSecond?: number;
  /** Store targets only: `ratio` over the peer's ratio of the same Node, shape and round. */
  peerRatio?: number;
}

/**
 * The keys a shape uses in a round. Hot: the same 2 keys in every round, unless the CLI caps a key's per-minute
 * limit below what a minute of hot load needs (then a fresh pair of the same account each round, so that a
 * key's window holds at most one run's requests and nothing is refused; the report says so).
 */
function shapeKeys(s: Server, shape: Shape, round: number): string[] {
  if (shape === "hot") {
    const pair = s.perMinute < WANTED_PER_MINUTE ? (round - 1) % (KEYS_PER_ACCOUNT / 2) : 0;
    return s.keys.slice(2 * pair, 2 * pair + 2);
  }
  if (shape === "spread") return s.keys.slice(0, 20);
  return s.keys;
}

function targetsOf(s: Server, shapes: readonly Shape[]): Target[] {
  return shapes.map((shape) => ({
    name: `${s.kind}${s.variant === null ? "" : ` [${s.variant}]`}, ${shape}, Node ${s.node.major}`,
    kind: s.kind,
    variant: s.variant,
    node: s.node,
    shape,
    url: s.url,
    requests: (round: number) => shapeKeys(s, shape, round).map((key) => ({ method: "GET", path: PATH, headers: { authorization: `Bearer ${key}`, host: HOST } })),
    cpuMs: () => s.cpuMs(),
    ...(s.database !== undefined
      ? {
          sideCpuMs: () => {
            // The backends of this server's database, as they are at the start of the measured run.
            const pids = pgBackendPids(s.database as string);
            return pids.length === 0 ? null : () => cpuMsOfPids(pids);
          },
        }
      : {}),
  }));
}

async function measure(generator: LoadProcess, target: Target, set: Settings, round: number): Promise<Run> {
  const requests = target.requests(round);
  const base = { url: target.url + (requests[0]?.path ?? "/"), connections: set.connections, requests };
  if (set.warmup > 0) await generator.run({ ...base, seconds: set.warmup });
  const side = target.sideCpuMs?.() ?? null;
  const cpu0 = target.cpuMs();
  const side0 = side?.() ?? null;
  const r = await generator.run({ ...base, seconds: set.seconds });
  const side1 = side?.() ?? null;
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
  node: string;
  nodeMajor: number;
  kind: Kind;
  variant: string | null;
  shape: Shape;
  ratio: number | null;
  ratioToPeer: number | null;
  requestsPerSecond: number | null;
  floorRequestsPerSecond: number | null;
  p50: number | null;
  p99: number | null;
  serverCpuMicrosPerRequest: number | null;
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

const fmt = (x: number | null | undefined, digits = 2): string => (x === null || x === undefined ? "–" : x.toFixed(digits));
const int = (x: number | null): string => (x === null ? "–" : Math.round(x).toLocaleString("en"));

function summarise(target: Target, runs: Run[]): Summary {
  const pick = (f: (r: Run) => number | null | undefined): number | null => median(runs.map(f).filter((x): x is number => typeof x === "number"));
  return {
    name: target.name,
    node: target.node.version,
    nodeMajor: target.node.major,
    kind: target.kind as Kind,
    variant: target.variant,
    shape: target.shape as Shape,
    ratio: pick((r) => r.ratio),
    ratioToPeer: pick((r) => r.peerRatio),
    requestsPerSecond: pick((r) => r.requestsPerSecond),
    floorRequestsPerSecond: pick((r) => r.floorRequestsPerSecond),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    serverCpuMicrosPerRequest: pick((r) => r.serverCpuMicrosPerRequest),
    dbCpuMicrosPerRequest: pick((r) => r.dbCpuMicrosPerRequest),
    non2xxShare: runs.reduce((n, r) => n + r.non2xx + r.errors, 0) / Math.max(1, runs.reduce((n, r) => n + r.total, 0)),
    runs,
  };
}

/** Issue 30's targets, per Node, as far as this run measured them. */
function checks(summaries: Summary[], hotOverSpread: Map<string, number | null>): Check[] {
  const out: Check[] = [];
  const nodes = [...new Set(summaries.map((s) => s.nodeMajor))];
  for (const node of nodes) {
    const get = (kind: Kind, shape: Shape): Summary | undefined => summaries.find((s) => s.nodeMajor === node && s.kind === kind && s.shape === shape && s.variant === null);
    const goal = (kind: Store, shape: Shape, min: number): void => {
      const s = get(kind, shape);
      if (s === undefined) return;
      out.push({ what: `Node ${node}: ${kind}, ${shape}`, goal: `≥ ${min.toFixed(2)} of the floor`, measured: fmt(s.ratio), met: s.ratio === null ? null : s.ratio >= min });
    };
    goal("memory", "hot", 0.65);
    goal("memory", "spread", 0.65);
    goal("sqlite", "hot", 0.5);
    goal("sqlite", "spread", 0.5);
    goal("postgres", "spread", 0.3);
    for (const shape of SHAPES) {
      const s = get("memory", shape);
      if (s === undefined || s.ratioToPeer === null) continue;
      out.push({ what: `Node ${node}: memory, ${shape}, against the peer`, goal: "> 1.00 (ahead of it)", measured: fmt(s.ratioToPeer), met: s.ratioToPeer > 1 });
    }
  }
  for (const [what, hs] of hotOverSpread) {
    out.push({ what: `${what}: hot ÷ spread`, goal: "≥ 0.90", measured: fmt(hs), met: hs === null ? null : hs >= 0.9 });
  }
  for (const s of summaries) {
    if (s.non2xxShare > 0) out.push({ what: `${s.name}: answered 200`, goal: "100% (a refusal would flatter the figure)", measured: `${(100 * (1 - s.non2xxShare)).toFixed(3)}%`, met: false });
  }
  if (summaries.every((s) => s.non2xxShare === 0)) out.push({ what: "every answer of every run", goal: "200", measured: "200", met: true });
  return out;
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

interface Report {
  startedAt: string;
  minutes: number;
  settings: Settings;
  machine: { cpu: string; cores: number; nodes: string[]; postgres: string | null; commit: string | null; dirty: boolean };
  loadAverage: { start: string; end: string; byRound: string[] };
  perMinute: number;
  notes: string[];
  floors: { node: string; requestsPerSecond: number | null; cpuMicrosPerRequest: number | null; runs: Run[] }[];
  results: Summary[];
  hotOverSpread: Record<string, number | null>;
  pairs: Pair[];
  checks: Check[];
}

/** A variant against this checkout's default server of the same store, Node and shape, round by round. */
interface Pair {
  node: number;
  kind: Store;
  shape: Shape;
  variant: string;
  /** Each round's variant ratio over the default's ratio (both to the same round's floors). */
  byRound: number[];
  median: number | null;
  variantCpu: number | null;
  defaultCpu: number | null;
}

function pairsOf(results: Summary[]): Pair[] {
  const out: Pair[] = [];
  for (const v of results) {
    if (v.variant === null) continue;
    const d = results.find((s) => s.variant === null && s.kind === v.kind && s.shape === v.shape && s.nodeMajor === v.nodeMajor);
    if (d === undefined) continue;
    const byRound = v.runs.flatMap((run) => {
      const other = d.runs.find((r) => r.round === run.round);
      return run.ratio === undefined || other?.ratio === undefined ? [] : [run.ratio / other.ratio];
    });
    out.push({ node: v.nodeMajor, kind: v.kind as Store, shape: v.shape, variant: v.variant, byRound, median: median(byRound), variantCpu: v.serverCpuMicrosPerRequest, defaultCpu: d.serverCpuMicrosPerRequest });
  }
  return out;
}

function format(r: Report): string {
  const parts: string[] = [];
  parts.push(`# benchdata serve vs the node:http floor and the assembled peer (${r.startedAt})`);
  parts.push(
    `${r.machine.cpu}, ${r.machine.cores} cores; Node ${r.machine.nodes.join(" and ")}; PostgreSQL ${r.machine.postgres ?? "–"}; commit ${r.machine.commit ?? "?"}${r.machine.dirty ? " + uncommitted changes" : ""}. ` +
      `${r.settings.quick ? "Quick" : "Full"} run: ${r.settings.rounds} rounds × ${r.settings.seconds} s (+${r.settings.warmup} s warm-up), ${r.settings.connections} connections; took ${r.minutes.toFixed(1)} min. ` +
      `Load average (1/5/15 min) at the start ${r.loadAverage.start}, at the end ${r.loadAverage.end}; per round: ${r.loadAverage.byRound.join("; ")}.`,
  );
  for (const note of r.notes) parts.push(`Note: ${note}`);
  parts.push(
    table(
      ["Node", "target", "shape", "ratio to floor (median of rounds)", "ratio to peer", "req/s", "floor req/s", "p50 ms", "p99 ms", "server CPU µs/req", "DB CPU µs/req", "ratios to floor by round"],
      r.results.map((s) => [
        String(s.nodeMajor),
        s.variant === null ? s.kind : `${s.kind} [${s.variant}]`,
        SHAPE_LABEL[s.shape],
        `**${fmt(s.ratio)}**`,
        s.kind === "peer" ? "1" : fmt(s.ratioToPeer),
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
    `Floors: ${r.floors.map((f) => `Node ${f.node} ${int(f.requestsPerSecond)} req/s (median run), ${fmt(f.cpuMicrosPerRequest, 1)} µs CPU per request`).join("; ")}. ` +
      `Hot ÷ spread (median of same-round ratios): ${Object.entries(r.hotOverSpread).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}. ` +
      `Per-key limit ${r.perMinute.toLocaleString("en")}/min. DB CPU counts the backends of the server's own database.`,
  );
  if (r.pairs.length > 0) {
    parts.push(
      "Pairs: each variant against this checkout's default server of the same store, Node and shape. A round's quotient is the variant's ratio to the floor over the default's, both in that round (the two sit next to each other, and the round's order flips every round).",
    );
    parts.push(
      table(
        ["Node", "store", "shape", "variant", "variant ÷ default (median of rounds)", "by round", "server CPU µs/req, default → variant"],
        r.pairs.map((p) => [String(p.node), p.kind, SHAPE_LABEL[p.shape], p.variant, `**${fmt(p.median, 3)}**`, p.byRound.map((q) => fmt(q, 3)).join(" / "), `${fmt(p.defaultCpu, 1)} → ${fmt(p.variantCpu, 1)}`]),
      ),
    );
  }
  parts.push(table(["target", "goal", "measured", "met"], r.checks.map((c) => [c.what, c.goal, c.measured, c.met === null ? "n/a" : c.met ? "yes" : "**no**"])));
  return parts.join("\n\n");
}

function machine(nodes: NodeRuntime[]): Report["machine"] {
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
    nodes: nodes.map((n) => `${n.version} (${n.source})`),
    postgres: pg.status === 0 ? pg.stdout.trim() : null,
    commit: git.status === 0 ? git.stdout.trim() : null,
    dirty: dirty.status === 0 && dirty.stdout.trim() !== "",
  };
}

// ---- one server, for the profile and instructions modes ---------------------------------------------------

/** Starts the server `kind` on `node` (for `--profile` and `--instructions`). */
async function startOne(kind: Kind, node: NodeRuntime, tmp: string, cleanup: (() => Promise<void>)[], launch: Launch, variant: Variant | null = null): Promise<Server> {
  if (kind === "peer") return startPeer(node, tmp, launch);
  const where = await storeUrl(kind, tmp, node, cleanup);
  if (where === null) throw new Error("PostgreSQL is unreachable");
  return startStore(kind, node, where, tmp, launch, variant);
}

async function profile(tmp: string, generator: LoadProcess, cleanup: (() => Promise<void>)[], set: Settings): Promise<void> {
  const dir = join(tmp, "profile");
  mkdirSync(dir);
  const node = nodeRuntime(Number(flag("node") ?? set.nodes[0] ?? 20), { refresh: has("refresh-node"), log });
  const kind = (flag("store") ?? "memory") as Kind;
  const shape = (flag("shape") ?? "hot") as Shape;
  const s = await startOne(kind, node, tmp, cleanup, { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "250"] });
  const seconds = Math.max(set.seconds, 10);
  const target = targetsOf(s, [shape])[0] as Target;
  const base = { url: s.url + PATH, connections: set.connections, requests: target.requests(1) };
  log(`${clock()} profile: warming up ${set.warmup + 2} s`);
  await generator.run({ ...base, seconds: set.warmup + 2 });
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpu0 = s.cpuMs();
  log(`${clock()} profile: loading the ${shape} shape for ${seconds} s (load ${load()})`);
  const r = await generator.run({ ...base, seconds });
  const cpu1 = s.cpuMs();
  const to = Number(process.hrtime.bigint() / 1000n);
  await s.stop();
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile") && f.includes(`.${s.pid}.`));
  if (file === undefined) throw new Error("no .cpuprofile written");
  const cpuPerRequest = cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / r.total;
  const parsed = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile & { endTime: number };
  log(`${clock()} profile: ${parsed.samples.length} samples from ${parsed.startTime} to ${parsed.endTime} µs; load from ${from} to ${to}`);
  const breakdown = requestBreakdown(parsed, { from, to, requests: r.total, cpuMicrosPerRequest: cpuPerRequest });
  const what = kind === "peer" ? "the assembled peer" : `benchdata serve --db ${kind}`;
  const text =
    `# Where a request's CPU goes: ${what} on Node ${node.version}, ${SHAPE_LABEL[shape]} (${new Date().toISOString()}, load ${load()})\n\n` +
    `${Math.round(r.requestsPerSecond)} req/s under the profiler (250 µs sampling), ${fmt(cpuPerRequest, 1)} µs server CPU per request (from /proc), ` +
    `${r.non2xx + r.errors} of ${r.total.toLocaleString("en")} answers not 2xx. ` +
    `Samples taken during the measured ${seconds} s only.\n\n` +
    breakdown;
  console.log(text);
  mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
  const name = `cli-profile-node${node.major}-${kind}-${shape}`;
  writeFileSync(join(repoRoot, `bench/results/${name}.md`), `${text}\n`);
  writeFileSync(join(repoRoot, `bench/results/${name}.cpuprofile`), readFileSync(join(dir, file)));
  log(`\nwritten: bench/results/${name}.md and .cpuprofile (open it in Chrome DevTools)`);
}

/**
 * `--instructions`: the floor and each server under valgrind's callgrind, instructions per request over a fixed
 * number of requests after a warm-up. `--single-threaded` puts V8's compiler and collector on the main thread,
 * so a count does not depend on when helper threads ran (callgrind counts every thread).
 */
async function instructions(tmp: string, generator: LoadProcess, cleanup: (() => Promise<void>)[], set: Settings): Promise<void> {
  const dir = join(tmp, "callgrind");
  mkdirSync(dir);
  const wrapper = callgrindWrapper(dir);
  const amount = Math.round(Number(flag("requests") ?? 5000));
  const shape = (flag("shape") ?? "spread") as Shape;
  const connections = 10;
  const nodes = set.nodes.map((n) => nodeRuntime(n, { refresh: has("refresh-node"), log }));
  const rows: string[][] = [];
  const tops: string[] = [];
  mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
  const startedAt = Date.now();
  const measureOne = async (name: string, pid: number, url: string, requests: LoadRequest[]): Promise<{ perRequest: number; dump: string }> => {
    const base = { url, connections, requests, seconds: 0 };
    log(`${clock()} ${name}: warming up (${2 * amount} requests under valgrind)`);
    await generator.run({ ...base, amount });
    await generator.run({ ...base, amount });
    log(`${clock()} ${name}: counting ${amount} requests`);
    let result: { non2xx: number; errors: number; total: number } = { non2xx: 0, errors: 0, total: 0 };
    const dump = join(repoRoot, `bench/results/callgrind-${name.replace(/[^a-z0-9]+/gi, "-")}.out`);
    const ir = await instructionsDuring(pid, dir, async () => {
      result = await generator.run({ ...base, amount });
    }, dump);
    if (result.non2xx > 0 || result.total === 0) throw new Error(`${name}: ${result.non2xx} non-2xx of ${result.total}`);
    // A request the load generator gave up on (its time-out, on a loaded machine under valgrind) is not counted:
    // the instructions are divided by the answers.
    if (result.errors > 0) log(`${clock()} ${name}: ${result.errors} requests timed out in the load generator; dividing by the ${result.total} answered`);
    log(`${clock()} ${name}: ${Math.round(ir / result.total).toLocaleString("en")} instructions per request`);
    return { perRequest: ir / result.total, dump };
  };
  const nodeArgs = ["--single-threaded", "--perf-basic-prof", "--no-logfile-per-isolate", `--logfile=${join(dir, "v8.log")}`];
  for (const node of nodes) {
    const floorServer = await startTarget({ name: "floor", script: "bench/lib/target-node-floor.ts", wrapper, node: node.bin, nodeArgs: ["--single-threaded"] });
    let floor: number;
    try {
      floor = (await measureOne(`floor node${node.major}`, floorServer.pid as number, floorServer.url + "/", [{ method: "GET", path: "/" }])).perRequest;
    } finally {
      await floorServer.stop();
    }
    rows.push([`Node ${node.major}`, "node:http floor", Math.round(floor).toLocaleString("en"), "1.00"]);
    // Each store, then its variants (--analytics=both, --against) one after the other: instructions do not
    // drift with the machine's load, so a pair needs no interleaving.
    for (const [kind, variant] of set.stores.flatMap((k) => [null, ...(k === "peer" ? [] : set.variants)].map((v): [Kind, Variant | null] => [k, v]))) {
      // --perf-basic-prof: V8 writes /tmp/perf-<pid>.map, which names the JIT code callgrind sees only as addresses.
      const s = await startOne(kind, node, tmp, cleanup, { wrapper, nodeArgs }, variant);
      const label = `${kind}${variant === null ? "" : ` [${variant.label}]`}`;
      try {
        const target = targetsOf(s, [shape])[0] as Target;
        const { perRequest, dump } = await measureOne(`${label} ${shape} node${node.major}`, s.pid, s.url + PATH, target.requests(1));
        rows.push([`Node ${node.major}`, kind === "peer" ? "the assembled peer" : `benchdata serve --db ${label}`, Math.round(perRequest).toLocaleString("en"), (floor / perRequest).toFixed(3)]);
        const map = `/tmp/perf-${s.pid}.map`;
        const costs = selfCosts(dump, existsSync(map) ? map : null);
        const top = [...costs].sort((a, b) => b[1] - a[1]).slice(0, 30);
        const all = [...costs.values()].reduce((a, b) => a + b, 0);
        tops.push(
          `## ${label}, ${shape}, Node ${node.version}: the 30 functions with the most instructions of their own\n\n` +
            table(["function (self)", "instructions per request", "share"], top.map(([name, ir]) => [name.replace(/\|/g, "\\|").slice(0, 110), Math.round((perRequest * ir) / all).toLocaleString("en"), `${((100 * ir) / all).toFixed(1)}%`])),
        );
        // Kept beside the dump (callgrind-jit.ts reads both).
        if (existsSync(map)) writeFileSync(dump.replace(/\.out$/, ".map"), readFileSync(map));
      } finally {
        await s.stop();
      }
    }
  }
  // Not left in /tmp: the perf maps of this run's servers and of their child processes (which inherit the flag),
  // recognised by this checkout's path inside.
  for (const file of readdirSync("/tmp").filter((f) => /^perf-\d+\.map$/.test(f))) {
    const path = join("/tmp", file);
    if (statSync(path).mtimeMs >= startedAt && readFileSync(path, "utf8").includes(repoRoot)) rmSync(path);
  }
  const text = [
    `# Instructions per request (callgrind, --single-threaded; ${amount} requests after ${2 * amount} of warm-up, ${connections} connections, ${SHAPE_LABEL[shape]}; ${new Date().toISOString()})`,
    "",
    table(["Node", "server", "instructions per request", "floor's ÷ server's"], rows),
    "",
    "The dumps are kept in bench/results/callgrind-*.out (`callgrind_annotate` reads them; JIT code is named by",
    "`npx tsx bench/lib/callgrind-jit.ts <dump> <map>`, as below).",
    "",
    ...tops.map((t) => `${t}\n`),
  ].join("\n");
  console.log(`\n${text}`);
  writeFileSync(join(repoRoot, "bench/results/cli-instructions.md"), `${text}\n`);
}

// ---- main -----------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const set = settings();
  const started = Date.now();
  ensureBuilt();
  const tmp = mkdtempSync(join(tmpdir(), "benchdata-cli-bench-"));
  const notes: string[] = process.env.BENCH_SOURCE_NOTE ? [process.env.BENCH_SOURCE_NOTE] : [];
  if (flag("analytics") === "off") notes.push("Usage analytics off in benchdata's servers (--analytics=off).");
  for (const v of set.variants) notes.push(`Variant measured beside each store: ${v.label}${v.bin === undefined ? "" : ` (${v.bin})`}.`);
  const servers: Server[] = [];
  const floorServers = new Map<number, RunningTarget>();
  const cleanup: (() => Promise<void>)[] = [];
  let generator: LoadProcess | null = null;
  try {
    log(`${clock()} load average ${load()}; starting the load generator`);
    generator = await startLoadProcess();
    if (has("profile")) return await profile(tmp, generator, cleanup, set);
    if (has("instructions")) return await instructions(tmp, generator, cleanup, set);
    const nodes = set.nodes.map((n) => nodeRuntime(n, { refresh: has("refresh-node"), log }));
    // Read before the run: the commit measured, not the one checked out by the time the report is written.
    const host = machine(nodes);
    for (const node of nodes) {
      log(`${clock()} Node ${node.major}: ${node.version} (${node.source}, ${node.bin})`);
      const f = await startTarget({ name: `node:http floor on Node ${node.major}`, script: "bench/lib/target-node-floor.ts", node: node.bin });
      floorServers.set(node.major, f);
      log(`${clock()} floor on Node ${node.major}: listening on ${f.url} (pid ${f.pid})`);
      for (const kind of set.stores) {
        if (kind === "peer") {
          servers.push(await startPeer(node, tmp));
          continue;
        }
        if (kind === "sqlite" && needsCompiledSqlite(node)) {
          notes.push(`SQLite left out on Node ${node.major}: the tree's better-sqlite3 is compiled for the machine's Node (run such a Node's tests through a copy, as .ci/node24 does).`);
          continue;
        }
        // The default server, then each variant on a database of its own.
        for (const variant of [null, ...set.variants]) {
          const where = await storeUrl(kind, tmp, node, cleanup);
          if (where === null) {
            if (!notes.includes("PostgreSQL unreachable: left out.")) notes.push("PostgreSQL unreachable: left out.");
            log(`${clock()} postgres: unreachable, left out`);
            break;
          }
          servers.push(await startStore(kind, node, where, tmp, {}, variant));
        }
      }
    }
    const perMinute = Math.min(...servers.filter((s) => s.kind !== "peer").map((s) => s.perMinute), WANTED_PER_MINUTE);
    if (perMinute < WANTED_PER_MINUTE) notes.push(`the CLI caps a key at ${perMinute.toLocaleString("en")} requests per minute: a hot shape faster than ${Math.round((2 * perMinute) / 60).toLocaleString("en")} req/s would be refused, so the hot shape takes a fresh pair of keys each round (a key's window then holds at most one run's requests).`);

    const floors = new Map<number, Target>(
      nodes.map((node) => {
        const f = floorServers.get(node.major) as RunningTarget;
        return [node.major, { name: `floor, Node ${node.major}`, kind: "floor", variant: null, node, shape: null, url: f.url, requests: () => [{ method: "GET", path: "/" }], cpuMs: f.cpuMs }];
      }),
    );
    // A store's variants next to its default, shape by shape, so that a pair shares its floor runs.
    const targets = set.shapes.flatMap((shape) => servers.flatMap((s) => targetsOf(s, [shape]))).sort((a, b) => KINDS.indexOf(a.kind as Kind) - KINDS.indexOf(b.kind as Kind) || set.shapes.indexOf(a.shape as Shape) - set.shapes.indexOf(b.shape as Shape));
    const runs = new Map<Target, Run[]>([...floors.values(), ...targets].map((t): [Target, Run[]] => [t, []]));
    const byRound: string[] = [];
    const hotSpread = new Map<string, number[]>();
    const plan = nodes.flatMap((node) => sequence(targets.filter((t) => t.node === node), floors.get(node.major) as Target));
    for (let round = 1; round <= set.rounds; round++) {
      byRound.push(`${clock()} ${load()}`);
      log(`\n${clock()} round ${round}/${set.rounds} (load average ${load()})`);
      const order = round % 2 === 0 ? [...plan].reverse() : plan;
      const done: { target: Target; run: Run }[] = [];
      for (const target of order) {
        const run = await measure(generator, target, set, round);
        done.push({ target, run });
        (runs.get(target) as Run[]).push(run);
        const refused = run.non2xx + run.errors === 0 ? "" : `, ${run.non2xx} non-2xx + ${run.errors} errors ${JSON.stringify(run.statusCodes)}`;
        const db = run.dbCpuMicrosPerRequest === null ? "" : ` + ${run.dbCpuMicrosPerRequest.toFixed(0)} µs DB`;
        log(`${run.at}   ${target.name.padEnd(28)} ${Math.round(run.requestsPerSecond).toString().padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  ${fmt(run.serverCpuMicrosPerRequest, 0)} µs CPU/req${db}${refused}`);
      }
      // Ratios: each target run over the mean of its Node's floor runs nearest before and after it in this round.
      done.forEach(({ target, run }, i) => {
        if (target.kind === "floor") return;
        const floor = floors.get(target.node.major);
        const before = done.slice(0, i).reverse().find((d) => d.target === floor)?.run;
        const after = done.slice(i + 1).find((d) => d.target === floor)?.run;
        const near = [before, after].filter((r): r is Run => r !== undefined);
        const floorRps = near.reduce((n, r) => n + r.requestsPerSecond, 0) / near.length;
        run.floorRequestsPerSecond = floorRps;
        run.ratio = run.requestsPerSecond / floorRps;
      });
      const ratioOf = (node: NodeRuntime, kind: Kind, shape: Shape, variant: string | null = null): number | undefined =>
        done.find((d) => d.target.node === node && d.target.kind === kind && d.target.shape === shape && d.target.variant === variant)?.run.ratio;
      for (const { target, run } of done) {
        if (target.kind === "floor" || target.kind === "peer" || run.ratio === undefined) continue;
        const peer = ratioOf(target.node, "peer", target.shape as Shape);
        if (peer !== undefined) run.peerRatio = run.ratio / peer;
      }
      log(`${clock()} round ${round} ratios: ${done.filter((d) => d.target.kind !== "floor").map((d) => `${d.target.name} ${fmt(d.run.ratio)}${d.run.peerRatio === undefined ? "" : ` (peer ×${fmt(d.run.peerRatio)})`}`).join(", ")}`);
      for (const s of servers) {
        const h = ratioOf(s.node, s.kind, "hot", s.variant);
        const sp = ratioOf(s.node, s.kind, "spread", s.variant);
        const key = `${s.kind}${s.variant === null ? "" : ` [${s.variant}]`} on Node ${s.node.major}`;
        if (h !== undefined && sp !== undefined) hotSpread.set(key, [...(hotSpread.get(key) ?? []), h / sp]);
      }
    }
    const results = targets.map((t) => summarise(t, runs.get(t) as Run[]));
    const hotOverSpread = new Map<string, number | null>([...hotSpread].map(([k, v]) => [k, median(v)]));
    const report: Report = {
      startedAt: new Date(started).toISOString(),
      minutes: (Date.now() - started) / 60_000,
      settings: set,
      machine: host,
      loadAverage: { start: byRound[0]?.split(" ").slice(1).join(" ") ?? load(), end: load(), byRound },
      perMinute,
      notes,
      floors: [...floors.values()].map((f) => {
        const floorRuns = runs.get(f) as Run[];
        return {
          node: f.node.version,
          requestsPerSecond: median(floorRuns.map((r) => r.requestsPerSecond)),
          cpuMicrosPerRequest: median(floorRuns.map((r) => r.serverCpuMicrosPerRequest).filter((x): x is number => x !== null)),
          runs: floorRuns,
        };
      }),
      results,
      hotOverSpread: Object.fromEntries(hotOverSpread),
      pairs: pairsOf(results),
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
    for (const s of servers) await s.stop();
    for (const f of floorServers.values()) await f.stop();
    generator?.stop();
    for (const step of cleanup) await step();
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
