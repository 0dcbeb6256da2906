/**
 * SQLite drivers under the same SQLite store: the measurement behind the driver each Node runs
 * (docs/runtimes.md). The work is the hot path's storage call, `admit`, K in flight at a time over a few keys
 * (the store batches what arrives together: one transaction per batch).
 *
 *   node --import tsx bench/sqlite-drivers.bench.ts [--seconds=N] [--rounds=N]
 *        wall-clock admits/s, 50 and 1 in flight, drivers alternating (this Node; needs node:sqlite, Node >= 22.5)
 *
 *   node --import tsx bench/sqlite-drivers.bench.ts --instructions [--nodes=20,24] [--drivers=…] [--keys=2,20]
 *        [--in-flight=50,1] [--count=5000] [--warmup=4×count] [--repeat=3]
 *        instructions per admit under callgrind, counted only around `count` admits after `warmup` others:
 *        repeatable on a busy machine. Each Node × driver × key count runs in a process of its own.
 *
 * Drivers: `default` (what `openSqlite` picks on that Node), `better-sqlite3` (the one openSqlite loads there),
 * `node:sqlite`, or the absolute path of a better-sqlite3 package folder (a copy built for that Node's ABI,
 * e.g. better-sqlite3 12 rebuilt for Node 24 to compare). A driver a Node cannot load is skipped with a note.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { createInterface } from "node:readline";
import { configureSqlite, createSqliteStorage } from "../packages/storage-kysely/src/sqlite/sqlite-storage.ts";
import { openSqlite, runtimeSqliteDriver, type SqliteDatabase, type SqliteDriverName } from "../packages/storage-kysely/src/sqlite/driver.ts";
import { callgrindWrapper, instructionsDuring } from "./lib/callgrind.ts";
import { repoRoot } from "./lib/http-target.ts";
import { nodeRuntime } from "./lib/node-runtimes.ts";

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const list = (name: string, fallback: string): string[] => (arg(name) ?? fallback).split(",").filter((x) => x !== "");

const ACCOUNT = "acc_01JDDRIVERBENCH0000000000";
const keyId = (i: number, keys: number): string => `key_01JDDRIVERBENCH${String(i % keys).padStart(9, "0")}`;

/** A store on a fresh file with driver `spec` (see the module comment). */
async function openStore(dir: string, spec: string): Promise<ReturnType<typeof createSqliteStorage> & { driverLabel: string }> {
  const path = join(dir, `${spec.replace(/[^a-z0-9]+/gi, "-")}-${process.pid}-${Math.random().toString(36).slice(2)}.db`);
  let db: SqliteDatabase;
  let label: string;
  if (isAbsolute(spec)) {
    const Database = createRequire(join(spec, "package.json"))(spec) as new (path: string, options: object) => SqliteDatabase;
    db = new Database(path, { timeout: 5000 });
    label = `better-sqlite3 ${(createRequire(join(spec, "package.json"))("./package.json") as { version: string }).version} (${spec})`;
  } else {
    const driver = spec === "default" ? runtimeSqliteDriver() : (spec as SqliteDriverName);
    const opened = await openSqlite(path, { driver });
    db = opened;
    label = opened.driver;
  }
  configureSqlite(db);
  const storage = createSqliteStorage(db, { clock: "app" });
  await storage.migrate();
  return Object.assign(storage, { driverLabel: label });
}

/** `count` admits, `inFlight` at a time, over `keys` keys of one account (test keys: no quota). */
async function admits(storage: ReturnType<typeof createSqliteStorage>, count: number, inFlight: number, keys: number, clock: { t: number }): Promise<void> {
  let left = count;
  let i = 0;
  const worker = async (): Promise<void> => {
    while (left-- > 0) {
      const r = await storage.admit({ now: clock.t++, keyId: keyId(i++, keys), accountId: ACCOUNT, perMinute: 100_000_000, perDay: 2_147_483_647, windowMs: 60_000, quota: null });
      if (r.kind !== "allowed") throw new Error(`refused: ${r.kind}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

// ---- the child measured under callgrind ----------------------------------------------------------

/** Warm up, say `ready`, wait for a line, run the measured admits, say `done`, wait for a line, exit. */
async function child(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-drivers-"));
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  try {
    const storage = await openStore(dir, arg("driver") ?? "default");
    const count = Number(arg("count") ?? 5000);
    const inFlight = Number(arg("in-flight") ?? 50);
    const keys = Number(arg("keys") ?? 2);
    const clock = { t: 1_700_000_000_000 };
    await admits(storage, Number(arg("warmup") ?? 4 * count), inFlight, keys, clock);
    process.stdout.write(`ready ${JSON.stringify({ node: process.version, driver: storage.driverLabel })}\n`);
    await lines.next();
    await admits(storage, count, inFlight, keys, clock);
    process.stdout.write("done\n");
    await lines.next();
    await storage.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One Node × driver × keys under callgrind: instructions per admit, or why it could not run. */
function measureUnderCallgrind(node: string, spec: string, keys: number, inFlight: number, count: number, warmup: number, dumps: string): Promise<{ perAdmit: number; label: string } | { error: string }> {
  const script = join(repoRoot, "bench/sqlite-drivers.bench.ts");
  // --single-threaded: V8 compiles and collects on the main thread, so the count does not depend on when its
  // helper threads happened to run (callgrind counts every thread).
  const [file, ...args] = [...callgrindWrapper(dumps), node, "--single-threaded", "--import", "tsx", script, "--child", `--driver=${spec}`, `--keys=${keys}`, `--in-flight=${inFlight}`, `--count=${count}`, `--warmup=${warmup}`];
  const proc = spawn(file as string, args, { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
  let errors = "";
  proc.stderr.on("data", (c: Buffer) => (errors = (errors + c.toString("utf8")).slice(-4000)));
  const out = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((done) => proc.once("exit", (code) => done(code)));
  return (async () => {
    const first = await out.next();
    if (first.done === true || !String(first.value).startsWith("ready ")) {
      const code = await exited;
      return { error: `exited (${code}) before measuring: ${errors.split("\n").filter((l) => !l.startsWith("==")).join(" ").slice(-300)}` };
    }
    const { driver } = JSON.parse(String(first.value).slice(6)) as { driver: string };
    const ir = await instructionsDuring(proc.pid as number, dumps, async () => {
      proc.stdin.write("go\n");
      const next = await out.next();
      if (next.value !== "done") throw new Error(`expected done, got ${String(next.value)}: ${errors}`);
    }, process.env.BENCH_KEEP_DUMP);
    proc.stdin.end("exit\n");
    await exited;
    return { perAdmit: ir / count, label: driver };
  })();
}

async function instructions(): Promise<void> {
  const nodes = list("nodes", "20,24").map((n) => nodeRuntime(Number(n), { log: (l) => process.stderr.write(`${l}\n`) }));
  const drivers = list("drivers", "default,node:sqlite");
  const keyCounts = list("keys", "2,20").map(Number);
  const inFlights = list("in-flight", "50").map(Number);
  const count = Number(arg("count") ?? 5000);
  const warmup = Number(arg("warmup") ?? 4 * count);
  // A major collection lands in some measured windows and not in others (V8 schedules them partly by time):
  // each figure is the median of `repeat` processes, with their range.
  const repeat = Number(arg("repeat") ?? 3);
  const dumps = mkdtempSync(join(tmpdir(), "benchdata-drivers-callgrind-"));
  const rows: string[] = [];
  try {
    for (const node of nodes) {
      for (const spec of drivers) {
        for (const inFlight of inFlights) {
          for (const keys of keyCounts) {
            const runs: number[] = [];
            let label = spec;
            let error = "";
            for (let i = 0; i < repeat && error === ""; i++) {
              process.stderr.write(`Node ${node.version}, ${spec}, ${inFlight} in flight, ${keys} keys (${i + 1}/${repeat}): ${count} admits after ${warmup} of warm-up, under callgrind… `);
              const r = await measureUnderCallgrind(node.bin, spec, keys, inFlight, count, warmup, dumps);
              if ("error" in r) error = r.error;
              else {
                runs.push(r.perAdmit);
                label = r.label;
              }
              process.stderr.write(`${"error" in r ? r.error : Math.round(r.perAdmit).toLocaleString("en")}\n`);
            }
            const sorted = [...runs].sort((a, b) => a - b);
            const fmt = (x: number): string => Math.round(x).toLocaleString("en");
            rows.push(error !== "" ? `| ${node.version} | ${spec} | ${inFlight} | ${keys} | – (${error}) | |` : `| ${node.version} | ${label} | ${inFlight} | ${keys} | ${fmt(sorted[Math.floor(sorted.length / 2)]!)} | ${runs.map(fmt).join(" / ")} |`);
          }
        }
      }
    }
  } finally {
    rmSync(dumps, { recursive: true, force: true });
  }
  console.log(`\nInstructions per admit (callgrind, --single-threaded; ${count} admits after ${warmup} of warm-up; median of ${repeat} processes):\n`);
  console.log("| Node | driver | in flight | keys | instructions per admit | runs |\n|---|---|---:|---:|---:|---|");
  for (const row of rows) console.log(row);
}

// ---- wall clock ------------------------------------------------------------------------------------

async function wallClock(): Promise<void> {
  const seconds = Number(arg("seconds") ?? 3);
  const rounds = Number(arg("rounds") ?? 5);
  const dir = mkdtempSync(join(tmpdir(), "benchdata-drivers-"));
  const measure = async (spec: string, inFlight: number): Promise<number> => {
    const storage = await openStore(dir, spec);
    let done = 0;
    const until = Date.now() + seconds * 1000;
    const clock = { t: Date.now() };
    const started = Date.now();
    while (Date.now() < until) {
      await admits(storage, 1000, inFlight, 2, clock);
      done += 1000;
    }
    const rate = done / ((Date.now() - started) / 1000);
    await storage.close();
    return rate;
  };
  const drivers = list("drivers", "better-sqlite3,node:sqlite");
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const results: Record<string, number[]> = {};
  for (let round = 1; round <= rounds; round++) {
    for (const spec of round % 2 ? drivers : [...drivers].reverse()) {
      for (const inFlight of [50, 1]) {
        const rate = await measure(spec, inFlight);
        (results[`${spec}, ${inFlight} in flight`] ??= []).push(rate);
        process.stderr.write(`round ${round}: ${spec}, ${inFlight} in flight: ${Math.round(rate)} admits/s\n`);
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`\nNode ${process.version}, ${rounds} rounds × ${seconds} s, median admits/s:`);
  for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(40)} ${Math.round(median(v)).toLocaleString("en")}   (${v.map((x) => Math.round(x)).join(" / ")})`);
}

if (process.argv.includes("--child")) await child();
else if (process.argv.includes("--instructions")) await instructions();
else await wallClock();
process.exit(0);
