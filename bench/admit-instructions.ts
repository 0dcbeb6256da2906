/**
 * Instructions per admission on the memory and SQLite stores, in-process, counted by valgrind's callgrind: the
 * hot path of every data request (the window, the day counter, the quota step) without HTTP, so two versions of
 * the admission compare on a busy machine. One admission at a time (SQLite: a batch of one, its own
 * transaction), a clock that steps 1 ms per admission, limits that never refuse; 200 keys in rotation.
 *
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg/cg.%p \
 *     node --single-threaded --predictable-gc-schedule --import tsx bench/admit-instructions.ts [calls=20000] \
 *       [--warmup=N] [--stores=memory,sqlite] [--admit-only] --out=/tmp/cg/x
 *
 * `--predictable-gc-schedule` fixes V8's heap growing, which otherwise follows the collector's measured speed,
 * so the collector's share of a count does not move with the machine's load. *
 * (TSX_TSCONFIG_PATH=bench/tsconfig.json maps @benchdata/* to the sources.) Prints, per store, instructions per
 * call for a live key's admission (window, day, quota), a test key's (window and day) and the whole in-process
 * data request (createApp, test keys); outside callgrind it prints µs per call only.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { defineConfig } from "@benchdata/core";
import type { AdmitInput, Storage } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "@benchdata/storage-kysely";
import { hashSecretNode } from "../packages/adapter-node/src/hash-secret-node.ts";
import { installBridgeResponse, simpleResponseParts } from "../packages/adapter-node/src/bridge-response.ts";
import { seedKeys } from "./lib/seed-keys.ts";

installBridgeResponse();
const calls = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 20_000);
/** Calls before counting (default 2 × calls): V8 compiles the hot functions during these, not in the count. */
const warmup = Number(process.argv.find((a) => a.startsWith("--warmup="))?.slice(9) ?? 2 * calls);
const withRequest = !process.argv.includes("--admit-only");
const outFile = process.argv.find((a) => a.startsWith("--out="))?.slice(6);
const KEYS = 200;
const ACCOUNTS = 4;

function counted(): number | null {
  const control = (...args: string[]): boolean => spawnSync("callgrind_control", [...args, String(process.pid)]).status === 0;
  if (!control("-d")) return null;
  control("-i", "off");
  const dir = outFile ? dirname(outFile) : "/tmp";
  const dumps = readdirSync(dir).filter((f) => f.includes(`.${process.pid}.`)).sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const last = dumps.at(-1);
  const totals = last ? /^totals:\s*(\d+)/m.exec(readFileSync(`${dir}/${last}`, "utf8")) : null;
  if (last) rmSync(`${dir}/${last}`);
  return totals ? Number(totals[1]) : null;
}

/** Runs `step` `warmup` times, then `calls` times counted; prints instructions (and µs) per call. */
async function measure(name: string, step: (i: number) => Promise<unknown>): Promise<void> {
  const run = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await step(i);
  };
  await run(warmup);
  spawnSync("callgrind_control", ["-z", String(process.pid)]);
  spawnSync("callgrind_control", ["-i", "on", String(process.pid)]);
  const t = performance.now();
  await run(calls);
  const ms = performance.now() - t;
  const ir = counted();
  console.log(`${name}: ${ir === null ? "(not under callgrind)" : `${Math.round(ir / calls).toLocaleString("en")} instructions per call`}, ${((ms * 1000) / calls).toFixed(2)} µs per call`);
}

let tick = Date.UTC(2026, 0, 5, 12);
const clock = { now: (): number => (tick += 1) };
const quota = (i: number): AdmitInput["quota"] => ({
  anchorDay: 1,
  baseQuota: 1_000_000_000,
  blockSize: 1000,
  blockPrice: 500,
  currency: "usd",
  retryAfterFailureMs: 3_600_000,
  maxAutoCharges: 10,
  warningEventId: `evt_w${i}`,
  invoiceId: `inv_${i}`,
  heldEventId: `evt_h${i}`,
});
const admitOf = (s: Storage, live: boolean) => (i: number) =>
  s.admit({ now: (tick += 1), keyId: `key_${i % KEYS}`, accountId: `acc_${i % ACCOUNTS}`, perMinute: 100_000, perDay: 2_000_000_000, windowMs: 60_000, environment: live ? "live" : "test", quota: live ? quota(i) : null });

const dir = mkdtempSync(join(tmpdir(), "benchdata-admit-instructions-"));
const stores = (process.argv.find((a) => a.startsWith("--stores="))?.slice(9) ?? "memory,sqlite").split(",");
for (const kind of ["memory", "sqlite"] as const) {
  if (!stores.includes(kind)) continue;
  const storage = await openStorage(kind === "memory" ? "memory:" : `sqlite:${join(dir, "admit.db")}`, { clock: "app" });
  await storage.migrate();
  for (let a = 0; a < ACCOUNTS; a++) await storage.createAccount({ id: `acc_${a}`, name: `bench ${a}`, tier: "enterprise", createdAt: tick, limits: {}, allowedCidrs: [], billing: {} });
  await measure(`${kind}: admit, live key (window, day, quota)`, admitOf(storage, true));
  await measure(`${kind}: admit, test key (window, day)`, admitOf(storage, false));
  if (!withRequest) {
    await storage.close();
    continue;
  }
  const config = defineConfig({ target: "test", tiers: { enterprise: { perMinute: 100_000, perDay: 2_000_000_000 } } });
  const app = createApp({ storage, config, clock, adminToken: "bench-admin", hashSecret: hashSecretNode });
  const keys = await seedKeys({ fetch: app.fetch, adminToken: "bench-admin", keys: KEYS, environment: "test" });
  const data = keys.map((k) => new Request("http://127.0.0.1/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5", { headers: { authorization: `Bearer ${k}` } }));
  await measure(`${kind}: data request (createApp, test key)`, async (i) => {
    const r = await app.fetch(data[i % data.length] as Request);
    if (r.status !== 200 || simpleResponseParts(r) === undefined) throw new Error(`answered ${r.status}`);
  });
  await storage.close();
}
rmSync(dir, { recursive: true, force: true });
process.exit(0);
