/**
 * Exactness across processes: four OS processes, each with its own connection(s), migrate the same store at
 * once and then hammer `admit` on the same keys. The store alone must keep the totals exact.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStorage } from "./open-storage.ts";
import type { HammerPlan, HammerReport } from "./test-support/admit-hammer.ts";
import { createTestDatabase, pgAvailableForTests } from "./test-support/pg-test-database.ts";
import { runtimeSqliteDriver } from "./sqlite/driver.ts";

const here = dirname(fileURLToPath(import.meta.url));
const HAMMER = join(here, "test-support", "admit-hammer.ts");
const TSCONFIG = join(here, "..", "tsconfig.json");
const BIN = join(here, "..", "..", "..", "node_modules", ".bin");
const DENO_CONFIG = join(here, "..", "test", "runtimes", "deno.json");
const WORKERS = 4;

/** The runtimes whose processes hammer the store: each opens SQLite with its own driver (better-sqlite3, bun:sqlite, node:sqlite). */
type Runtime = "node" | "bun" | "deno";
const ALL_RUNTIMES: readonly Runtime[] = ["node", "bun", "deno"];
// BENCHDATA_MULTIPROCESS_RUNTIMES=node narrows the run (CI's second Node, .ci/node24, where Bun and Deno
// already ran); the mixed case needs all three and is left out then.
const RUNTIMES: readonly Runtime[] = process.env.BENCHDATA_MULTIPROCESS_RUNTIMES
  ? ALL_RUNTIMES.filter((r) => process.env.BENCHDATA_MULTIPROCESS_RUNTIMES!.split(",").includes(r))
  : ALL_RUNTIMES;
// Node processes run the Node running this test, so they use its driver (better-sqlite3; node:sqlite from Node 24).
const SQLITE_DRIVER: Readonly<Record<Runtime, string>> = { node: runtimeSqliteDriver(), bun: "bun:sqlite", deno: "node:sqlite" };

function command(runtime: Runtime, plan: string): [string, string[]] {
  if (runtime === "bun") return [join(BIN, "bun"), [HAMMER, plan]];
  if (runtime === "deno") return [join(BIN, "deno"), ["run", "-A", "--no-check", "--config", DENO_CONFIG, HAMMER, plan]];
  return [process.execPath, ["--import", "tsx", HAMMER, plan]];
}

/** Sizes of one run: enough requests that the processes overlap for a while, not only race for the first slots. */
interface Sizes {
  readonly perMinute: number;
  readonly windowRequests: number;
  readonly baseQuota: number;
  readonly quotaRequests: number;
}
// PostgreSQL serialises admissions of one key on its row lock for the length of a commit, so it gets fewer.
const SQLITE_SIZES: Sizes = { perMinute: 1000, windowRequests: 600, baseQuota: 1000, quotaRequests: 400 };
const POSTGRES_SIZES: Sizes = { perMinute: 300, windowRequests: 200, baseQuota: 300, quotaRequests: 150 };

function runChild(runtime: Runtime, plan: HammerPlan): Promise<HammerReport> {
  return new Promise((resolve, reject) => {
    const [bin, args] = command(runtime, JSON.stringify(plan));
    const child = spawn(bin, args, {
      env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG, NODE_OPTIONS: "", NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(JSON.parse(out) as HammerReport);
      else reject(new Error(`worker ${plan.worker} exited with ${code}: ${err}`));
    });
  });
}

async function hammer(runtime: Runtime | "mixed", url: string, z: Sizes): Promise<{ reports: HammerReport[]; accountId: string }> {
  const accountId = "acc_01JDMULTIPROCESS000000000";
  const base = {
    url,
    // Children need ~1-2 s to start (tsx); they all begin at this moment.
    startAt: Date.now() + 4000,
    accountId,
    windowKeyId: "key_01JDWINDOW00000000000000000",
    perMinute: z.perMinute,
    windowRequests: z.windowRequests,
    quotaKeyId: "key_01JDQUOTA000000000000000000",
    baseQuota: z.baseQuota,
    quotaRequests: z.quotaRequests,
    concurrency: 8,
  };
  const reports = await Promise.all(Array.from({ length: WORKERS }, (_, worker) => runChild(runtime === "mixed" ? ALL_RUNTIMES[worker % ALL_RUNTIMES.length]! : runtime, { ...base, worker })));
  return { reports, accountId };
}

function expectExact(reports: HammerReport[], z: Sizes): void {
  const sum = (f: (r: HammerReport) => number): number => reports.reduce((n, r) => n + f(r), 0);
  expect(sum((r) => r.window.allowed)).toBe(z.perMinute);
  expect(sum((r) => r.window.limited)).toBe(WORKERS * z.windowRequests - z.perMinute);
  expect(sum((r) => r.quota.allowed)).toBe(z.baseQuota);
  expect(sum((r) => r.quota.exhausted)).toBe(WORKERS * z.quotaRequests - z.baseQuota);
  expect(sum((r) => r.quota.flipped)).toBe(1);
  expect(reports.flatMap((r) => r.quota.charges)).toHaveLength(1);
  expect(sum((r) => r.quota.warned)).toBe(1);
  console.info(`admitted per worker: window ${reports.map((r) => r.window.allowed).join("/")}, quota ${reports.map((r) => r.quota.allowed).join("/")}`);
}

describe.each(RUNTIMES)("multi-process exactness on %s: sqlite", (runtime) => {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-mp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`${WORKERS} ${runtime} processes on one SQLite file admit exactly perMinute, and exactly one charge at exhaustion`, async () => {
    const url = `sqlite:${join(dir, "shared.db")}`;
    const { reports, accountId } = await hammer(runtime, url, SQLITE_SIZES);
    expect(reports.map((r) => r.driver)).toEqual(Array(WORKERS).fill(SQLITE_DRIVER[runtime]));
    expectExact(reports, SQLITE_SIZES);
    const s = await openStorage(url);
    const invoices = await s.listInvoices(accountId);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: "pending", block: 1, attempt: 1, callsUsed: SQLITE_SIZES.baseQuota });
    expect((await s.usage(accountId, Date.now(), 1, SQLITE_SIZES.baseQuota, 10)).month).toBe(SQLITE_SIZES.baseQuota);
    await s.close();
  }, 60_000);
});

describe.skipIf(RUNTIMES.length < ALL_RUNTIMES.length)("multi-process exactness, runtimes mixed: sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-mp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("node, bun and deno processes on one SQLite file (three drivers) admit exactly perMinute, and exactly one charge", async () => {
    const url = `sqlite:${join(dir, "shared.db")}`;
    const { reports } = await hammer("mixed", url, SQLITE_SIZES);
    expect(new Set(reports.map((r) => r.driver))).toEqual(new Set(Object.values(SQLITE_DRIVER)));
    expectExact(reports, SQLITE_SIZES);
  }, 60_000);
});

const pgOn = await pgAvailableForTests("multi-process");

describe.skipIf(!pgOn).each(RUNTIMES)("multi-process exactness on %s: postgres", (runtime) => {
  it(`${WORKERS} ${runtime} processes on one PostgreSQL database (database clock) admit exactly perMinute, and exactly one charge at exhaustion`, async () => {
    const t = await createTestDatabase();
    try {
      const { reports, accountId } = await hammer(runtime, t.url, POSTGRES_SIZES);
      expectExact(reports, POSTGRES_SIZES);
      const s = await openStorage(t.url);
      const invoices = await s.listInvoices(accountId);
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({ status: "pending", block: 1, attempt: 1, callsUsed: POSTGRES_SIZES.baseQuota });
      await s.close();
    } finally {
      await t.drop();
    }
  }, 60_000);
});
