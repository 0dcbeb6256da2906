/**
 * Where a full-pipeline request's time goes, without HTTP: `app.fetch` run in-process on memory, SQLite and
 * PostgreSQL storage, next to the storage calls it makes (`findKeyByHash`, `admit`) and the cheapest routes
 * (`/healthz`, a data request without a key), so the report can split a request into router + Response,
 * auth + limits in storage, and the handler. Also a V8 CPU profile of the in-process loop by layer, and what
 * one request allocates (V8's sampling heap profiler, collected objects included), by allocation site.
 *
 * The adapter's light Response is installed first, as `serve` does in production, so the Response core
 * builds costs here what it costs behind adapter-node. Requests are built once and reused, so the Request
 * constructor (the bridge's job) stays out of the figures.
 *
 *   npx tsx --tsconfig bench/tsconfig.json bench/pipeline.bench.ts     BENCH_PG_URL=postgres://… adds PostgreSQL
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { Storage } from "@benchdata/core";
import { createMemoryStorage, defineConfig, hashSecret } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { hashSecretNode } from "../packages/adapter-node/src/hash-secret-node.ts";
import { openStorage } from "@benchdata/storage-kysely";
import { installBridgeResponse, simpleResponseParts } from "../packages/adapter-node/src/bridge-response.ts";
import { cpuMsOfCommand } from "./lib/process-cpu.ts";
import type { BucketShare, CpuProfile } from "./lib/profile-buckets.ts";
import { profileBuckets, topFunctions } from "./lib/profile-buckets.ts";
import { seedKeys } from "./lib/seed-keys.ts";

/** The request every HTTP full-pipeline target answers. */
export const PIPELINE_PATH = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas";

/** One storage's in-process figures, µs. */
export interface PipelineStoreResult {
  readonly storage: "memory" | "sqlite" | "postgres";
  /** Wall time per request with 50 requests in flight (one process, so about its CPU for in-process stores). */
  readonly concurrentMicros: number;
  /** This process's CPU per request at 50 in flight. */
  readonly cpuMicros: number;
  /** PostgreSQL's processes' CPU per request at 50 in flight (null for in-process stores). */
  readonly dbCpuMicros: number | null;
  /** One request at a time, mean µs per call. */
  readonly sequential: {
    readonly full: number;
    readonly findKeyByHash: number;
    readonly admit: number;
    readonly healthz: number;
    readonly missingKey: number;
  };
  readonly non2xx: number;
  readonly requests: number;
}

/** Where PostgreSQL's cost comes from, each figure µs per call, one call at a time. */
export interface PostgresDiagnostics {
  /** `SELECT 1` through a pg Pool: what any query costs on this machine before doing anything. */
  readonly roundTrip: { readonly wallMicros: number; readonly nodeCpuMicros: number; readonly dbCpuMicros: number };
  /**
   * The statements storage sends for `findKeyByHash` and `admit` (captured from the driver, so they follow the
   * code), re-sent on one plain pg client: the lookup re-sent as an unnamed statement (parsed and planned on
   * every call) and as a named prepared statement; admit with the default `synchronous_commit = on` and off.
   */
  readonly statements: {
    readonly findKeyUnnamed: number;
    readonly findKeyPrepared: number;
    readonly admit: number;
    readonly admitAsyncCommit: number;
  } | null;
  /** The pipeline measurement with `synchronous_commit = off` on the database (diagnostic only). */
  readonly asyncCommit: PipelineStoreResult;
}

/** What the pipeline bench measured. */
export interface PipelineBenchResult {
  readonly stores: PipelineStoreResult[];
  readonly postgres?: PostgresDiagnostics;
  /** In-process CPU profile of the memory pipeline at 50 in flight, by layer. */
  readonly profile: BucketShare[];
  readonly topFunctions: { name: string; share: number }[];
  readonly allocation: {
    readonly bytesPerRequest: number;
    readonly sites: { site: string; bytesPerRequest: number }[];
  };
}

const ADMIN = "bench-admin-token";

interface Rig {
  fetch(request: Request): Promise<Response>;
  storage: Storage;
  keys: string[];
  close(): Promise<void>;
}

async function rig(kind: PipelineStoreResult["storage"], url: string | null, keys: number): Promise<Rig> {
  const storage: Storage = kind === "memory" ? createMemoryStorage() : await openStorage(url as string);
  await storage.migrate();
  const app = createApp({ storage, config: defineConfig({ target: "test" }), adminToken: ADMIN, hashSecret: hashSecretNode });
  const raw = await seedKeys({ fetch: app.fetch, adminToken: ADMIN, keys, environment: "test" });
  return { fetch: app.fetch, storage, keys: raw, close: () => storage.close() };
}

function requestsFor(keys: readonly string[], path: string): Request[] {
  return keys.map((key) => new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }));
}

/** Takes the body the way the bridge does: a simple response's string as is, anything else through its stream. */
async function consume(response: Response): Promise<void> {
  if (simpleResponseParts(response) === undefined) await response.arrayBuffer();
}

/** Runs `total` calls with `inFlight` outstanding at a time; returns the wall ms and non-2xx answers. */
async function pool(total: number, inFlight: number, call: (i: number) => Promise<Response>): Promise<{ ms: number; non2xx: number }> {
  let next = 0;
  let non2xx = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < total) {
      const response = await call(next++);
      if (response.status < 200 || response.status > 299) non2xx++;
      await consume(response);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { ms: performance.now() - started, non2xx };
}

async function sequentialMicros(calls: number, run: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, calls); i++) await run(i);
  const started = performance.now();
  for (let i = 0; i < calls; i++) await run(i);
  return ((performance.now() - started) * 1000) / calls;
}

async function measureStore(kind: PipelineStoreResult["storage"], url: string | null, scale: number): Promise<PipelineStoreResult> {
  const r = await rig(kind, url, 120);
  try {
    const data = requestsFor(r.keys, PIPELINE_PATH);
    const call = (i: number): Promise<Response> => r.fetch(data[i % data.length] as Request);
    const n = Math.round((kind === "memory" ? 20_000 : 6_000) * scale);
    await pool(Math.min(2000, n), 50, call); // warm-up
    const cpu0 = process.cpuUsage();
    const db0 = kind === "postgres" ? cpuMsOfCommand("postgres") : null;
    const concurrent = await pool(n, 50, call);
    const db1 = kind === "postgres" ? cpuMsOfCommand("postgres") : null;
    const cpu = process.cpuUsage(cpu0);
    const seqN = Math.round((kind === "memory" ? 5000 : 2000) * scale);
    const full = await sequentialMicros(seqN, async (i) => consume(await call(i)));
    const hashes = r.keys.map((k) => hashSecret(k));
    const lookups = await Promise.all(hashes.map((h) => r.storage.findKeyByHash(h)));
    const findKeyByHash = await sequentialMicros(seqN, (i) => r.storage.findKeyByHash(hashes[i % hashes.length] as string));
    const admit = await sequentialMicros(seqN, (i) => {
      const l = lookups[i % lookups.length];
      if (!l) throw new Error("seeded key not found");
      return r.storage.admit({ now: Date.now(), keyId: l.key.id, accountId: l.account.id, perMinute: 1000, perDay: 2_000_000, windowMs: 60_000, quota: null });
    });
    const health = new Request("http://127.0.0.1/healthz");
    const healthz = await sequentialMicros(seqN, async () => consume(await r.fetch(health)));
    const anonymous = new Request(`http://127.0.0.1${PIPELINE_PATH}`);
    const missingKey = await sequentialMicros(seqN, async () => consume(await r.fetch(anonymous)));
    return {
      storage: kind,
      concurrentMicros: (concurrent.ms * 1000) / n,
      cpuMicros: ((cpu.user + cpu.system) / n) * 1,
      dbCpuMicros: db0 === null || db1 === null ? null : ((db1 - db0) * 1000) / n,
      sequential: { full, findKeyByHash, admit, healthz, missingKey },
      non2xx: concurrent.non2xx,
      requests: n,
    };
  } finally {
    await r.close();
  }
}

async function profileMemory(scale: number): Promise<{ profile: BucketShare[]; top: { name: string; share: number }[] }> {
  const r = await rig("memory", null, 120);
  const data = requestsFor(r.keys, PIPELINE_PATH);
  const call = (i: number): Promise<Response> => r.fetch(data[i % data.length] as Request);
  await pool(2000, 50, call);
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    await pool(Math.round(30_000 * scale), 50, call);
    const { profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile };
    return { profile: profileBuckets(profile), top: topFunctions(profile, 12) };
  } finally {
    session.disconnect();
    await r.close();
  }
}

interface HeapNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: HeapNode[];
}

async function allocation(scale: number): Promise<PipelineBenchResult["allocation"]> {
  const r = await rig("memory", null, 120);
  const data = requestsFor(r.keys, PIPELINE_PATH);
  const call = (i: number): Promise<Response> => r.fetch(data[i % data.length] as Request);
  await pool(2000, 1, call);
  const n = Math.round(10_000 * scale);
  const session = new Session();
  session.connect();
  try {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", { samplingInterval: 64, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
    // One request at a time: the figure is per request, not per batch of in-flight ones.
    await pool(n, 1, call);
    const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: HeapNode } };
    const sites = new Map<string, number>();
    let total = 0;
    const walk = (node: HeapNode): void => {
      if (node.selfSize > 0) {
        const { functionName, url } = node.callFrame;
        const file = url.replace(/^file:\/\/.*?\/(packages|node_modules|bench)\//, "$1/");
        const site = `${functionName || "(anonymous)"} ${file || "(native)"}`;
        sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
        total += node.selfSize;
      }
      node.children.forEach(walk);
    };
    walk(profile.head);
    return {
      bytesPerRequest: total / n,
      sites: [...sites]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 15)
        .map(([site, bytes]) => ({ site, bytesPerRequest: bytes / n })),
    };
  } finally {
    session.disconnect();
    await r.close();
  }
}

interface Captured {
  text: string;
  values: unknown[];
}

/** Runs `call` and returns the statements it sent through pg (text and values). */
async function capture(call: () => Promise<unknown>): Promise<Captured[]> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const seen: Captured[] = [];
  proto.query = function (this: unknown, ...args: unknown[]): unknown {
    const [first, second] = args;
    if (typeof first === "string") seen.push({ text: first, values: Array.isArray(second) ? second : [] });
    else if (first !== null && typeof first === "object" && "text" in first) {
      const q = first as { text: string; values?: unknown[] };
      seen.push({ text: q.text, values: q.values ?? (Array.isArray(second) ? second : []) });
    }
    return original.apply(this, args);
  };
  try {
    await call();
  } finally {
    proto.query = original;
  }
  return seen;
}

async function perCall(n: number, call: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 100; i++) await call(i);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await call(i);
  return ((performance.now() - t0) * 1000) / n;
}

async function statementCosts(url: string, n: number): Promise<PostgresDiagnostics["statements"]> {
  const r = await rig("postgres", url, 120);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const hashes = r.keys.map((k) => hashSecret(k));
    const lookups = await Promise.all(hashes.map((h) => r.storage.findKeyByHash(h)));
    const find = (await capture(() => r.storage.findKeyByHash(hashes[0] as string))).at(-1);
    const first = lookups[0];
    if (find === undefined || !first) return null;
    const admitInput = (keyId: string, accountId: string): Parameters<Storage["admit"]>[0] => ({ now: Date.now(), keyId, accountId, perMinute: 1_000_000, perDay: 1_000_000_000, windowMs: 60_000, quota: null });
    const admit = (await capture(() => r.storage.admit(admitInput(first.key.id, first.account.id)))).at(-1);
    if (admit === undefined) return null;
    // The same statement for the i-th key: swap the captured key's values for that key's.
    const findValues = (i: number): unknown[] => find.values.map((v) => (v === hashes[0] ? hashes[i % hashes.length] : v));
    const admitValues = (i: number): unknown[] => {
      const l = lookups[i % lookups.length];
      return admit.values.map((v) => (v === first.key.id ? l?.key.id : v === first.account.id ? l?.account.id : v));
    };
    const findKeyUnnamed = await perCall(n, (i) => client.query(find.text, findValues(i)));
    const findKeyPrepared = await perCall(n, (i) => client.query({ name: "bench_find_key", text: find.text, values: findValues(i) }));
    const admitOn = await perCall(n, (i) => client.query(admit.text, admitValues(i)));
    await client.query("SET synchronous_commit = off");
    const admitOff = await perCall(n, (i) => client.query(admit.text, admitValues(i)));
    return { findKeyUnnamed, findKeyPrepared, admit: admitOn, admitAsyncCommit: admitOff };
  } finally {
    await client.end();
    await r.close();
  }
}

async function postgresDiagnostics(url: string, scale: number): Promise<PostgresDiagnostics> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const n = Math.round(3000 * scale);
  let roundTrip: PostgresDiagnostics["roundTrip"];
  try {
    for (let i = 0; i < 200; i++) await pool.query("SELECT 1");
    const db0 = cpuMsOfCommand("postgres") as number;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await pool.query("SELECT 1");
    const wall = ((performance.now() - t0) * 1000) / n;
    const cpu = process.cpuUsage(cpu0);
    const db1 = cpuMsOfCommand("postgres") as number;
    roundTrip = { wallMicros: wall, nodeCpuMicros: (cpu.user + cpu.system) / n, dbCpuMicros: ((db1 - db0) * 1000) / n };
    const statements = await statementCosts(url, Math.round(1000 * scale));
    const database = new URL(url).pathname.slice(1);
    await pool.query(`ALTER DATABASE "${database}" SET synchronous_commit = off`);
    try {
      // New connections (the rig opens its own pool) start with the setting.
      return { roundTrip, statements, asyncCommit: await measureStore("postgres", url, scale) };
    } finally {
      await pool.query(`ALTER DATABASE "${database}" RESET synchronous_commit`);
    }
  } finally {
    await pool.end();
  }
}

/** Runs the in-process pipeline measurements; `postgresUrl` (an existing, migratable database) adds PostgreSQL. */
export async function runPipelineBench(options: { postgresUrl?: string | null; scale?: number } = {}): Promise<PipelineBenchResult> {
  installBridgeResponse();
  const scale = options.scale ?? 1;
  const dir = mkdtempSync(join(tmpdir(), "benchdata-pipeline-"));
  try {
    const stores = [await measureStore("memory", null, scale), await measureStore("sqlite", `sqlite:${join(dir, "pipeline.db")}`, scale)];
    if (options.postgresUrl) stores.push(await measureStore("postgres", options.postgresUrl, scale));
    const postgres = options.postgresUrl ? await postgresDiagnostics(options.postgresUrl, scale) : undefined;
    const { profile, top } = await profileMemory(scale);
    return { stores, ...(postgres ? { postgres } : {}), profile, topFunctions: top, allocation: await allocation(scale) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const result = await runPipelineBench({ postgresUrl: process.env.BENCH_PG_URL ?? null, scale: process.env.BENCH_QUICK === "1" ? 0.3 : 1 });
  console.log(JSON.stringify(result, null, 2));
}
