/**
 * `npm run bench:window`: what one admission costs when the key's window already holds 100,000 stamps, against
 * a key whose window is (nearly) empty, on memory, SQLite and PostgreSQL (issue 12: within 1.2x).
 *
 * Method. One store per kind, one account, a "full" key prefilled with 100,000 admissions spread over the
 * last 50 s (through `admit`, batched), limits that never refuse (1,000,000 a minute). Then rounds, alternating:
 * N admissions one after another (each its own batch, its own transaction) into the full key, then N into a
 * fresh key (empty when the round starts). Every admission is 1 ms after the previous, so the full key keeps
 * its 100,000 stamps (and more) all along. The cost of a round is CPU time, not wall time (the machine is
 * shared): this process's (process.cpuUsage) plus, for PostgreSQL, the server backend's (/proc/PID/stat, one
 * pooled connection). Reported: the median per admission over the rounds, and the ratio full / empty.
 *
 *   BENCH_WINDOW_ROUNDS (12)  rounds per key      BENCH_WINDOW_N (400)   admissions per round
 *   BENCH_WINDOW_FILL (100000) stamps in the full key's window                BENCH_PG=0  leave PostgreSQL out
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AdmitInput, Storage } from "@benchdata/core";
import { createMemoryStorage } from "@benchdata/core";
import pg from "pg";
import { createPostgresStorage, openStorage } from "../packages/storage-kysely/src/index.ts";
import { createTestDatabase, pgReachable } from "../packages/storage-kysely/src/test-support/pg-test-database.ts";

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const ROUNDS = env("BENCH_WINDOW_ROUNDS", 12);
const N = env("BENCH_WINDOW_N", 400);
const FILL = env("BENCH_WINDOW_FILL", 100_000);
const LIMIT = 1_000_000;
const T0 = Date.UTC(2026, 10, 25, 12);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface Target {
  readonly name: string;
  readonly storage: Storage;
  /** CPU ms spent outside this process so far (the PostgreSQL backend), or 0. */
  readonly serverCpuMs: () => Promise<number>;
  readonly close: () => Promise<void>;
}

const TICK_MS = 1000 / 100; // USER_HZ

function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function targets(): Promise<Target[]> {
  const out: Target[] = [];
  out.push({ name: "memory", storage: createMemoryStorage(), serverCpuMs: async () => 0, close: async () => {} });
  const dir = mkdtempSync(join(tmpdir(), "benchdata-window-"));
  const sqlite = await openStorage(`sqlite:${join(dir, "window.db")}`, { clock: "app" });
  await sqlite.migrate();
  out.push({ name: "sqlite", storage: sqlite, serverCpuMs: async () => 0, close: async () => { await sqlite.close(); rmSync(dir, { recursive: true, force: true }); } });
  if (process.env.BENCH_PG !== "0" && (await pgReachable())) {
    const t = await createTestDatabase();
    // One connection that never idles out: its backend's CPU is the server's share of each admission.
    const pool = new pg.Pool({ connectionString: t.url, max: 1, idleTimeoutMillis: 0 });
    const pgStore = createPostgresStorage(pool, { clock: "app" });
    await pgStore.migrate();
    const backend = Number((await pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
    out.push({
      name: "postgres",
      storage: pgStore,
      serverCpuMs: async () => procCpuMs(backend),
      close: async () => {
        await pgStore.close();
        await t.drop();
      },
    });
  } else log("PostgreSQL left out (BENCH_PG=0 or unreachable)");
  return out;
}

const input = (accountId: string, keyId: string, now: number): AdmitInput => ({ now, keyId, accountId, perMinute: LIMIT, perDay: 2_000_000_000, windowMs: 60_000, quota: null });

async function setUp(s: Storage, accountId: string, keyId: string): Promise<void> {
  await s.createKey({
    key: { id: keyId, accountId, name: keyId, environment: "live", scopes: ["benchmarks:read"], prefix: "svc_live_bench", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null },
    hash: `hash-${keyId}`,
    maxKeys: 1_000_000,
    eventId: `evt_${keyId}`,
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function measure(t: Target): Promise<{ fullUs: number; emptyUs: number; ratio: number }> {
  const s = t.storage;
  const accountId = `acc_window_${t.name}`;
  await s.createAccount({ id: accountId, name: "window bench", tier: "enterprise", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
  const full = `key_window_full_${t.name}`;
  await setUp(s, accountId, full);
  // The full key's window: FILL admissions over the 50 s before `start`, in concurrent groups (batched by the store).
  const start = T0 + 50_000;
  const started = Date.now();
  for (let i = 0; i < FILL; i += 1000) {
    const group = Array.from({ length: Math.min(1000, FILL - i) }, (_, j) => s.admit(input(accountId, full, T0 + Math.floor(((i + j) * 50_000) / FILL))));
    for (const r of await Promise.all(group)) if (r.kind !== "allowed") throw new Error(`prefill refused: ${r.kind}`);
  }
  log(`${t.name}: ${FILL} stamps in the full key's window (${Date.now() - started} ms)`);
  let now = start;
  const fullCosts: number[] = [];
  const emptyCosts: number[] = [];
  const round = async (keyId: string): Promise<number> => {
    const cpu0 = process.cpuUsage();
    const server0 = await t.serverCpuMs();
    for (let i = 0; i < N; i++) {
      const r = await s.admit(input(accountId, keyId, (now += 1)));
      if (r.kind !== "allowed") throw new Error(`refused: ${r.kind}`);
    }
    const cpu = process.cpuUsage(cpu0);
    const server = (await t.serverCpuMs()) - server0;
    return ((cpu.user + cpu.system) / 1000 + server) * 1000 / N;
  };
  // One unmeasured round of each first (JIT, caches).
  await round(full);
  await setUp(s, accountId, `key_window_warm_${t.name}`);
  await round(`key_window_warm_${t.name}`);
  for (let r = 0; r < ROUNDS; r++) {
    const empty = `key_window_empty_${t.name}_${r}`;
    await setUp(s, accountId, empty);
    if (r % 2 === 0) {
      fullCosts.push(await round(full));
      emptyCosts.push(await round(empty));
    } else {
      emptyCosts.push(await round(empty));
      fullCosts.push(await round(full));
    }
  }
  const fullUs = median(fullCosts);
  const emptyUs = median(emptyCosts);
  return { fullUs, emptyUs, ratio: fullUs / emptyUs };
}

const rows: string[] = [];
for (const t of await targets()) {
  try {
    const r = await measure(t);
    rows.push(`| ${t.name} | ${r.emptyUs.toFixed(1)} | ${r.fullUs.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.ratio <= 1.2 ? "yes" : "**no**"} |`);
    log(`${t.name}: empty ${r.emptyUs.toFixed(1)} µs, full ${r.fullUs.toFixed(1)} µs, ratio ${r.ratio.toFixed(2)}`);
  } finally {
    await t.close();
  }
}
process.stdout.write(
  [
    `Admission cost by window fill: CPU µs per admission (this process${rows.some((r) => r.startsWith("| postgres")) ? " + the PostgreSQL backend" : ""}), median of ${ROUNDS} rounds of ${N}`,
    "",
    `| store | empty window | ${FILL.toLocaleString("en-US")} stamps | ratio | within 1.2x |`,
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n"),
);
