/**
 * better-sqlite3 against node:sqlite under the same SQLite store, on one Node (≥ 22.5 for node:sqlite): the
 * measurement behind keeping better-sqlite3 on Node (docs/runtimes.md). The work is the hot path's storage
 * call, `admit`, 50 in flight at a time on two keys (the store batches what arrives together), then a
 * sequential run (batches of one: a transaction and its commit per call).
 *
 *   node --import tsx bench/sqlite-drivers.bench.ts [--seconds=N] [--rounds=N]
 *        [--better-sqlite3=DIR]   a better-sqlite3 built for this Node's ABI (the repo's is built for the
 *                                 Node that ran npm ci), e.g. a copy rebuilt with `node-gyp rebuild`
 *        [--count=N --driver=D --in-flight=K]   exactly N admits with one driver, then exit: run it under
 *                                 `valgrind --tool=callgrind` for N and 2N, and the difference over N is
 *                                 the instructions per admit, repeatable on a busy machine
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configureSqlite, createSqliteStorage } from "../packages/storage-kysely/src/sqlite/sqlite-storage.ts";
import { openSqlite, type SqliteDatabase } from "../packages/storage-kysely/src/sqlite/driver.ts";

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(arg("seconds") ?? 3);
const rounds = Number(arg("rounds") ?? 5);
const bs3Dir = arg("better-sqlite3");
const dir = mkdtempSync(join(tmpdir(), "benchdata-drivers-"));
let n = 0;

async function open(driver: "better-sqlite3" | "node:sqlite"): Promise<SqliteDatabase> {
  const path = join(dir, `${driver.replace(":", "-")}-${++n}.db`);
  if (driver === "better-sqlite3" && bs3Dir !== undefined) {
    const Database = createRequire(join(bs3Dir, "package.json"))(bs3Dir) as new (path: string, options: object) => SqliteDatabase;
    return new Database(path, { timeout: 5000 });
  }
  return openSqlite(path, { driver });
}

async function measure(driver: "better-sqlite3" | "node:sqlite", inFlight: number): Promise<number> {
  const db = await open(driver);
  configureSqlite(db);
  const storage = createSqliteStorage(db, { clock: "app" });
  await storage.migrate();
  const accountId = "acc_01JDDRIVERBENCH0000000000";
  const keys = ["key_01JDDRIVERBENCH0000000001", "key_01JDDRIVERBENCH0000000002"];
  let done = 0;
  let i = 0;
  const until = Date.now() + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (Date.now() < until) {
      const r = await storage.admit({ now: Date.now(), keyId: keys[i++ % 2]!, accountId, perMinute: 100_000_000, perDay: 2_147_483_647, windowMs: 60_000, quota: null });
      if (r.kind !== "allowed") throw new Error(`refused: ${r.kind}`);
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const rate = done / ((Date.now() - started) / 1000);
  await storage.close();
  return rate;
}

const count = arg("count");
if (count !== undefined) {
  const driver = (arg("driver") ?? "better-sqlite3") as "better-sqlite3" | "node:sqlite";
  const inFlight = Number(arg("in-flight") ?? 1);
  const db = await open(driver);
  configureSqlite(db);
  const storage = createSqliteStorage(db, { clock: "app" });
  await storage.migrate();
  let left = Number(count);
  let i = 0;
  let t = 1_700_000_000_000;
  const worker = async (): Promise<void> => {
    while (left-- > 0) await storage.admit({ now: t++, keyId: `key_01JDDRIVERBENCH000000000${i++ % 2}`, accountId: "acc_01JDDRIVERBENCH0000000000", perMinute: 100_000_000, perDay: 2_147_483_647, windowMs: 60_000, quota: null });
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results: Record<string, number[]> = {};
for (let round = 1; round <= rounds; round++) {
  for (const driver of round % 2 ? (["better-sqlite3", "node:sqlite"] as const) : (["node:sqlite", "better-sqlite3"] as const)) {
    for (const inFlight of [50, 1]) {
      const rate = await measure(driver, inFlight);
      (results[`${driver}, ${inFlight} in flight`] ??= []).push(rate);
      process.stderr.write(`round ${round}: ${driver}, ${inFlight} in flight: ${Math.round(rate)} admits/s\n`);
    }
  }
}
rmSync(dir, { recursive: true, force: true });
console.log(`\nNode ${process.version}, ${rounds} rounds × ${seconds} s, median admits/s:`);
for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(32)} ${Math.round(median(v)).toLocaleString("en")}   (${v.map((x) => Math.round(x)).join(" / ")})`);
