/**
 * `npm run bench:soak`: does the database stop growing once retention's horizon is passed (issue 26)?
 *
 * Method. One store per kind (SQLite file; PostgreSQL throwaway database), opened with the app's clock, which is a
 * simulated one: each simulated day has 24 hourly ticks, the clock set to each, and nothing else waits on it. Per
 * tick, every account sends its data requests through the HTTP app in-process (`app.fetch`: admission, limits,
 * quota, events, exactly as served), the billing worker settles the charges that exhaustion started, events are
 * written (the outbox) and the delivery worker sends them, with the production Node transport, to a receiver on
 * 127.0.0.1 in a child process (every 20th answer a 500, retried 30 s later). At the end of each day the pruning
 * worker runs (the defaults: deliveries and events 30 days, sessions 7, usage 400) and the size is read: SQLite's
 * pages in use ((page_count − freelist_count) × page_size, per table from dbstat), PostgreSQL's
 * pg_total_relation_size per table after a plain VACUUM (what autovacuum does within a real day; the bench's day
 * lasts seconds). Every day is checked exactly, through the API and storage: each account's day count equals its
 * admitted requests, the live keys reach their daily limit exactly, a burst over the minute limit is refused exactly
 * beyond it; at each month's end and at the end, the period's counted calls equal the live 200s, and each
 * exhaustion bought exactly one block (one paid invoice, at the block's price, and the allowance grew by it).
 *
 *   BENCH_SOAK_DAYS (50)  simulated days        BENCH_SOAK_ACCOUNTS (10)   accounts, each a live and a test key and a webhook
 *   BENCH_SOAK_EVENTS (30) events per account per day besides billing's   BENCH_PG=0  leave PostgreSQL out
 *   BENCH_SOAK_STORES (sqlite,postgres)
 *
 * Report: bench/results/soak-latest.md and .json.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { register } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { ManualClock, PruneReport, Storage } from "../packages/core/src/index.ts";

// Storage and the transport import `@benchdata/core`: point it (and `/http`) at the same sources as this file,
// so one copy of core runs and no build is needed.
const source = (p: string): string => new URL(p, import.meta.url).href;
register(
  `data:text/javascript,${encodeURIComponent(`
    const map = { "@benchdata/core": ${JSON.stringify(source("../packages/core/src/index.ts"))}, "@benchdata/core/http": ${JSON.stringify(source("../packages/core/src/http/index.ts"))} };
    export async function resolve(s, c, next) { return map[s] ? next(map[s], c) : next(s, c); }`)}`,
);
const core = await import("../packages/core/src/index.ts");
const { createApp } = await import("../packages/core/src/http/index.ts");
const { openStorage } = await import("../packages/storage-kysely/src/index.ts");
const { createTestDatabase, pgReachable } = await import("../packages/storage-kysely/src/test-support/pg-test-database.ts");
const { nodeResolve, nodeTransport } = await import("../packages/adapter-node/src/webhook-transport.ts");
const { hashSecretNode } = await import("../packages/adapter-node/src/hash-secret-node.ts");

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
};
const DAYS = env("BENCH_SOAK_DAYS", 50);
const ACCOUNTS = env("BENCH_SOAK_ACCOUNTS", 10);
const EVENTS_PER_DAY = env("BENCH_SOAK_EVENTS", 30);
const STORES = (process.env.BENCH_SOAK_STORES ?? "sqlite,postgres").split(",");

const DAY = 86_400_000;
const HOUR = 3_600_000;
// Calendar months from the first: January, then February (the billing periods are calendar months).
const T0 = Date.UTC(2026, 0, 1);
const ADMIN = "admin-token-for-the-soak-bench-0123456789";
const LIVE = "http://api.benchdata.test";
const SANDBOX = "http://sandbox.benchdata.test";
const PERCENTILE = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5&period=2025-Q4";
// Each account's limits: 25 live requests an hour and a burst of 65 at noon (640 a day) against 60 a minute and 600
// a day, so the minute limit refuses 5 at noon and the day limit the last 40; 4 test requests an hour (their own day).
const PER_MINUTE = 60;
const PER_DAY = 600;
const LIVE_PER_TICK = 25;
const BURST = PER_MINUTE + 5;
const TEST_PER_TICK = 4;
const QUOTA = { monthly_quota: 6000, block_size: 2000, block_price: 1000 };

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const fail = (what: string): never => {
  throw new Error(`soak: not exact: ${what}`);
};

/** The local receiver: a child process answering 200 with a small JSON body, every 20th request a 500. */
const RECEIVER = `
const http = require("node:http");
let n = 0;
const body = JSON.stringify({ ok: true, received: "thanks", note: "x".repeat(120) });
http.createServer({ keepAliveTimeout: 10000 }, (req, res) => {
  req.resume();
  req.on("end", () => {
    n++;
    if (n % 20 === 0) res.writeHead(500, { "Content-Type": "text/plain" }).end("temporarily unavailable");
    else res.writeHead(200, { "Content-Type": "application/json" }).end(body);
  });
}).listen(0, "127.0.0.1", function () { process.send(this.address().port); });
`;

/** One day's measurement. */
interface DaySample {
  readonly day: number;
  /** Bytes in use, all tables and indexes. */
  readonly bytes: number;
  /** Bytes by table (indexes included). */
  readonly tables: Record<string, number>;
  readonly requests: number;
  readonly deliveries: number;
  readonly pruned: PruneReport["deleted"];
}

/** One store's run. */
interface StoreResult {
  readonly store: string;
  readonly days: DaySample[];
  readonly requests: number;
  readonly deliveries: number;
  readonly invoices: number;
  readonly seconds: number;
}

interface Target {
  readonly name: string;
  readonly storage: Storage;
  /** Bytes in use by table (indexes counted with their table). */
  readonly sizes: () => Promise<Record<string, number>>;
  readonly close: () => Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-soak-"));
  const file = join(dir, "soak.db");
  const storage = await openStorage(`sqlite:${file}`, { clock: "app" });
  await storage.migrate();
  const { openSqlite } = await import("../packages/storage-kysely/src/sqlite/driver.ts");
  const raw = await openSqlite(file);
  const owner = new Map<string, string>();
  return {
    name: "sqlite",
    storage,
    async sizes() {
      for (const r of raw.prepare("SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')").all() as { name: string; tbl_name: string }[]) owner.set(r.name, r.tbl_name);
      const out: Record<string, number> = {};
      // Pages in use, by the table (or index) they belong to; freelist pages belong to none.
      for (const r of raw.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as { name: string; bytes: number }[]) {
        const table = owner.get(r.name) ?? r.name;
        out[table] = (out[table] ?? 0) + Number(r.bytes);
      }
      const pages = raw.prepare("SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count) AS n, (SELECT page_size FROM pragma_page_size) AS size").get() as { n: number; size: number };
      out["(total: pages in use)"] = pages.n * pages.size;
      return out;
    },
    async close() {
      raw.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresTarget(): Promise<Target> {
  const t = await createTestDatabase();
  const storage = await openStorage(t.url, { clock: "app" });
  await storage.migrate();
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  return {
    name: "postgres",
    storage,
    async sizes() {
      // A plain VACUUM makes deleted rows' space reusable, as autovacuum does in the course of a real day.
      await client.query("VACUUM");
      const rows = (await client.query("SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'")).rows as { name: string; bytes: string }[];
      const out: Record<string, number> = {};
      let total = 0;
      for (const r of rows) {
        out[r.name] = Number(r.bytes);
        total += Number(r.bytes);
      }
      out["(total: pg_total_relation_size)"] = total;
      return out;
    },
    async close() {
      await client.end();
      await storage.close();
      await t.drop();
    },
  };
}

/** Counts of one account, for the exactness checks. */
interface Tally {
  id: string;
  session: string;
  live: string;
  test: string;
  /** Live 200s by billing period start; live requests counted by the day (200 + 402) and test 200s, today. */
  liveOkByPeriod: Map<number, number>;
  dayLive: number;
  dayTest: number;
  /** Ticks in which a live request got 402 (each is one exhaustion: the charge settles between ticks), by period. */
  exhaustionsByPeriod: Map<number, number>;
}

async function soak(target: Target, receiverUrl: string): Promise<StoreResult> {
  const { storage } = target;
  const clock: ManualClock = core.manualClock(T0);
  const config = core.defineConfig({ webhooks: { allowHttp: true, allowPrivateNetworks: true, retryDelaysSeconds: [0, 30, 300] } });
  const values = Array.from({ length: 40 }, (_, i) => 0.3 + i / 100);
  await storage.replaceCells([{ category: "saas", segment: "all", period: "2025-Q4", metric: "gross_margin", cell: { sorted: Float64Array.from(values), sampleSize: 40 } }], []);
  const app = createApp({ storage, clock, config, adminToken: ADMIN, hashSecret: hashSecretNode });
  const transport = nodeTransport();
  let deliveries = 0;
  const deliveryLogger = { info: (m: string) => void (m === "webhook delivered" && deliveries++), warn() {}, error() {} };
  const worker = core.createDeliveryWorker({ storage, clock, config, transport, resolve: nodeResolve, concurrency: 32, logger: deliveryLogger });
  const billing = core.createBillingWorker({ storage, clock, random: core.cryptoRandom, processor: core.simulatedProcessor({ outcome: "succeed" }), config });
  const pruner = core.createPruneWorker({ storage, clock, config, pauseMs: 0 });

  const call = async (method: string, path: string, auth: string, body?: unknown, base = SANDBOX): Promise<{ status: number; body: Record<string, unknown> }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${auth}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await app.fetch(new Request(base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
    const text = await r.text();
    return { status: r.status, body: text.startsWith("{") ? JSON.parse(text) : {} };
  };
  const expectStatus = (r: { status: number; body: unknown }, status: number, what: string): void => {
    if (r.status !== status) throw new Error(`soak: ${what} answered ${r.status}: ${JSON.stringify(r.body)}`);
  };

  const tallies: Tally[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const acc = await call("POST", "/api/v1/admin/accounts", ADMIN, { name: `soak ${a}`, tier: "developer" });
    expectStatus(acc, 201, "account");
    const id = String(acc.body.account_id);
    const session = String(acc.body.session_token);
    expectStatus(await call("PATCH", `/api/v1/admin/accounts/${id}`, ADMIN, { limits: { per_minute: PER_MINUTE, per_day: PER_DAY, ...QUOTA } }), 200, "limits");
    const key = async (environment: string): Promise<string> => {
      const k = await call("POST", "/api/v1/console/keys", session, { name: environment, environment, scopes: ["benchmarks:read"] });
      expectStatus(k, 201, "key");
      return String(k.body.raw_key);
    };
    expectStatus(await call("POST", "/api/v1/console/webhooks", session, { url: receiverUrl, events: [...core.EVENT_TYPES] }), 201, "webhook");
    tallies.push({ id, session, live: await key("live"), test: await key("test"), liveOkByPeriod: new Map(), dayLive: 0, dayTest: 0, exhaustionsByPeriod: new Map() });
  }

  const deliverDue = async (): Promise<void> => {
    while ((await worker.tick()) > 0);
  };
  /** One account's requests at one moment: `n` with its live key and `m` with its test key, all at once. */
  const burst = async (t: Tally, n: number, m: number, period: number): Promise<{ refusedMinute: number; refusedDay: number }> => {
    const live = await Promise.all(Array.from({ length: n }, () => call("GET", PERCENTILE, t.live, undefined, LIVE)));
    const test = await Promise.all(Array.from({ length: m }, () => call("GET", PERCENTILE, t.test)));
    let refusedMinute = 0;
    let refusedDay = 0;
    let exhausted = false;
    for (const r of live) {
      if (r.status === 200) t.liveOkByPeriod.set(period, (t.liveOkByPeriod.get(period) ?? 0) + 1);
      if (r.status === 402) exhausted = true;
      if (r.status === 200 || r.status === 402) t.dayLive++;
      else if (r.status === 429) (String(r.body.detail).startsWith("Daily") ? refusedDay++ : refusedMinute++);
      else fail(`a live request answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
    if (exhausted) t.exhaustionsByPeriod.set(period, (t.exhaustionsByPeriod.get(period) ?? 0) + 1);
    for (const r of test) {
      if (r.status !== 200) fail(`a test request answered ${r.status}`);
      t.dayTest++;
    }
    return { refusedMinute, refusedDay };
  };

  /** The billing period's counted calls equal its live 200s; each exhaustion bought exactly one paid block. */
  const checkPeriod = async (period: number, now: number): Promise<void> => {
    for (const t of tallies) {
      const u = await storage.usage(t.id, now, 1, QUOTA.monthly_quota, QUOTA.block_size);
      if (u.periodStart !== period) fail(`period ${new Date(period).toISOString()} checked at ${new Date(now).toISOString()}`);
      const ok = t.liveOkByPeriod.get(period) ?? 0;
      if (u.month !== ok) fail(`${t.id}: month ${u.month} but ${ok} live 200s`);
      const invoices = (await storage.listInvoices(t.id)).filter((i) => Date.parse(i.periodStart) === period);
      const paid = invoices.filter((i) => i.status === "paid");
      const exhaustions = t.exhaustionsByPeriod.get(period) ?? 0;
      if (paid.length !== invoices.length || paid.length !== exhaustions) fail(`${t.id}: ${paid.length} paid of ${invoices.length} invoices, ${exhaustions} exhaustions`);
      if (paid.some((i) => i.amount !== QUOTA.block_price)) fail(`${t.id}: an invoice's amount is not the block price`);
      if (u.allowance !== QUOTA.monthly_quota + paid.length * QUOTA.block_size) fail(`${t.id}: allowance ${u.allowance} with ${paid.length} blocks`);
      if (ok > u.allowance) fail(`${t.id}: ${ok} calls beyond the allowance ${u.allowance}`);
    }
  };

  const phase: Record<string, number> = {};
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      phase[name] = (phase[name] ?? 0) + performance.now() - t0;
    }
  };
  const samples: DaySample[] = [];
  let requests = 0;
  const started = performance.now();
  let period = core.billingPeriod(T0, 1).start;
  for (let day = 0; day < DAYS; day++) {
    const dayStart = T0 + day * DAY;
    const requestsBefore = requests;
    const deliveriesBefore = deliveries;
    for (const t of tallies) {
      t.dayLive = 0;
      t.dayTest = 0;
    }
    // A console session and a one-time link per account each week (they expire in 30 days and 15 minutes).
    if (day % 7 === 0) {
      for (const t of tallies) {
        expectStatus(await call("POST", `/api/v1/admin/accounts/${t.id}/sessions`, ADMIN), 201, "session");
        expectStatus(await call("POST", `/api/v1/admin/accounts/${t.id}/sign-in-links`, ADMIN), 201, "sign-in link");
      }
    }
    for (let tick = 0; tick < 24; tick++) {
      const at = dayStart + tick * HOUR + 5 * 60_000;
      clock.set(at);
      const p = core.billingPeriod(at, 1).start;
      if (p !== period) {
        // The month ended: the one before is checked as it stands at its last moment.
        await checkPeriod(period, at - 6 * 60_000);
        period = p;
      }
      const refusals = await timed("requests", () => Promise.all(tallies.map((t) => burst(t, tick === 12 ? BURST : LIVE_PER_TICK, TEST_PER_TICK, period))));
      requests += tallies.length * ((tick === 12 ? BURST : LIVE_PER_TICK) + TEST_PER_TICK);
      for (const r of refusals) if (tick === 12 && r.refusedMinute !== BURST - PER_MINUTE && r.refusedDay === 0) fail(`the noon burst refused ${r.refusedMinute} by the minute, not ${BURST - PER_MINUTE}`);
      // Events besides billing's, spread over the day (written as the app writes them: the outbox).
      for (const t of tallies) {
        for (let e = Math.floor((tick * EVENTS_PER_DAY) / 24); e < Math.floor(((tick + 1) * EVENTS_PER_DAY) / 24); e++) {
          const id = core.newId("evt", clock, core.cryptoRandom);
          await storage.emitEvent(core.quotaWarningEvent(id, t.id, at, { used: e, allowance: 6000, threshold: 4800, periodStart: period, periodEnd: at }), at);
        }
      }
      // Every charge started this tick settles before the next (the worker takes 8 at a time).
      await timed("billing", async () => {
        while ((await billing.tick()) > 0);
      });
      await timed("deliveries", async () => {
        await deliverDue();
        // Retries of the failed attempts (30 s, then 5 min).
        clock.set(at + 31_000);
        await deliverDue();
        clock.set(at + 301_000);
        await deliverDue();
      });
    }
    // The day's exactness: every account's day count is what it was admitted, the live keys' reaches its limit.
    const now = dayStart + DAY - 60_000;
    clock.set(now);
    for (const t of tallies) {
      const today = await storage.dailyUsage(t.id, Math.floor(dayStart / DAY), now);
      const counted = today.reduce((n, d) => n + d.count, 0);
      if (counted !== t.dayLive + t.dayTest) fail(`${t.id} day ${day}: counted ${counted}, admitted ${t.dayLive} live + ${t.dayTest} test`);
      if (t.dayLive !== PER_DAY) fail(`${t.id} day ${day}: live keys admitted ${t.dayLive}, limit ${PER_DAY}`);
    }
    const report = await pruner.tick();
    if (report.failed) fail("the pruning run failed");
    const tables = await target.sizes();
    const total = Object.entries(tables).find(([k]) => k.startsWith("(total"))![1];
    samples.push({ day, bytes: total, tables, requests: requests - requestsBefore, deliveries: deliveries - deliveriesBefore, pruned: report.deleted });
    log(`${target.name} day ${day + 1}/${DAYS}: ${(total / 1024).toFixed(0)} KiB in use, ${requests - requestsBefore} requests, ${deliveries - deliveriesBefore} deliveries; pruned ${JSON.stringify(report.deleted)}`);
  }
  await checkPeriod(period, clock.now());
  log(`${target.name}: ms spent ${JSON.stringify(Object.fromEntries(Object.entries(phase).map(([k, v]) => [k, Math.round(v)])))}`);
  transport.close();
  let invoices = 0;
  for (const t of tallies) invoices += (await storage.listInvoices(t.id)).length;
  return { store: target.name, days: samples, requests, deliveries, invoices, seconds: (performance.now() - started) / 1000 };
}

/** Average growth per day between two days of a run (bytes), over all tables or some. */
function slope(r: StoreResult, from: number, to: number, tables?: readonly string[]): number {
  const size = (s: DaySample): number => (tables ? tables.reduce((n, t) => n + (s.tables[t] ?? 0), 0) : s.bytes);
  return (size(r.days[to]!) - size(r.days[from]!)) / (to - from);
}

const DELIVERY_TABLES = ["deliveries", "delivery_attempts", "events"];

function format(results: StoreResult[]): string {
  const lines: string[] = [];
  lines.push(`# Soak: ${DAYS} simulated days, ${ACCOUNTS} accounts, retention defaults (deliveries and events 30 days)`, "");
  lines.push(`Node ${process.version}. Per account and day: ${23 * LIVE_PER_TICK + BURST} live requests (${PER_DAY} admitted: the day limit), ${24 * TEST_PER_TICK} test, ${EVENTS_PER_DAY} events besides billing's, one webhook; blocks of ${QUOTA.block_size} calls after ${QUOTA.monthly_quota}.`, "");
  // Before the horizon: days 5 to 25 (nothing is old enough to prune yet); after it: from day 38 on (30 days of
  // deliveries and events, and the first sessions' 30 + 7, are past). Short runs measure over all their days.
  const before: [number, number] = DAYS > 26 ? [5, 25] : [0, DAYS - 1];
  const after: [number, number] = DAYS > 40 ? [Math.max(38, DAYS - 21), DAYS - 1] : [0, DAYS - 1];
  lines.push(`| store | requests | deliveries | invoices | seconds | bytes/day before (days ${before[0] + 1}–${before[1] + 1}) | bytes/day after (days ${after[0] + 1}–${after[1] + 1}) | bytes per million requests, before → after | delivery tables: bytes per thousand deliveries, before → after |`);
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of results) {
    const perDayRequests = r.requests / DAYS;
    const perDayDeliveries = r.deliveries / DAYS;
    const b = slope(r, ...before);
    const a = slope(r, ...after);
    const db = slope(r, ...before, DELIVERY_TABLES);
    const da = slope(r, ...after, DELIVERY_TABLES);
    lines.push(
      `| ${r.store} | ${r.requests} | ${r.deliveries} | ${r.invoices} | ${r.seconds.toFixed(0)} | ${b.toFixed(0)} | ${a.toFixed(0)} | ${((b / perDayRequests) * 1e6).toFixed(0)} → ${((a / perDayRequests) * 1e6).toFixed(0)} | ${((db / perDayDeliveries) * 1000).toFixed(0)} → ${((da / perDayDeliveries) * 1000).toFixed(0)} |`,
    );
  }
  for (const r of results) {
    lines.push("", `## ${r.store}: size by day (KiB in use), and by table every 10 days`, "");
    lines.push("| day | total | deliveries + attempts + events | pruned that day |", "|---:|---:|---:|---|");
    for (const s of r.days) {
      const pruned = Object.entries(s.pruned).filter(([, n]) => n > 0).map(([t, n]) => `${t} ${n}`).join(", ");
      lines.push(`| ${s.day + 1} | ${(s.bytes / 1024).toFixed(0)} | ${(DELIVERY_TABLES.reduce((n, t) => n + (s.tables[t] ?? 0), 0) / 1024).toFixed(0)} | ${pruned} |`);
    }
    const checkpoints = r.days.filter((s) => (s.day + 1) % 10 === 0 || s.day === r.days.length - 1);
    const tables = Object.keys(r.days.at(-1)!.tables).filter((t) => r.days.at(-1)!.tables[t]! > 0).sort();
    lines.push("", `| table (KiB) | ${checkpoints.map((s) => `day ${s.day + 1}`).join(" | ")} |`, `|---|${checkpoints.map(() => "---:").join("|")}|`);
    for (const t of tables) lines.push(`| ${t} | ${checkpoints.map((s) => ((s.tables[t] ?? 0) / 1024).toFixed(0)).join(" | ")} |`);
  }
  return lines.join("\n");
}

const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const port = await new Promise<number>((ok) => child.once("message", (m) => ok(Number(m))));
const results: StoreResult[] = [];
try {
  for (const name of STORES) {
    if (name === "postgres" && (process.env.BENCH_PG === "0" || !(await pgReachable()))) {
      log("PostgreSQL left out (BENCH_PG=0 or unreachable)");
      continue;
    }
    const target = name === "postgres" ? await postgresTarget() : await sqliteTarget();
    try {
      results.push(await soak(target, `http://127.0.0.1:${port}/hook`));
    } finally {
      await target.close();
    }
  }
} finally {
  child.kill();
}
const report = format(results);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/soak-latest.md", import.meta.url), report + "\n");
writeFileSync(new URL("./results/soak-latest.json", import.meta.url), JSON.stringify(results, null, 1) + "\n");
console.log(report);
