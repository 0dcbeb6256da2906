/**
 * Instructions per in-process data request (createApp on memory storage, configured as `benchdata serve`
 * configures it: the native SHA-256, the adapter's light Response), counted by valgrind's callgrind: no HTTP,
 * so a change in core's request path shows in isolation, and instruction counts do not depend on what else the
 * machine runs. Run it under callgrind; it switches instrumentation on only around the measured calls:
 *
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p \
 *     node --single-threaded --import tsx bench/app-instructions.ts [calls=20000] [path] --out=/tmp/cg
 *
 * (TSX_TSCONFIG_PATH=bench/tsconfig.json maps @benchdata/* to the sources.) Prints instructions per call for the
 * percentile request (200 keys in rotation) and for /healthz; with --parts, also for each part of a data
 * request on its own (hashing, query parsing, admission, the handler, the Response).
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createMemoryStorage, defineConfig } from "@benchdata/core";
import type { KeyLookup } from "@benchdata/core";
import { createSyntheticSource, parseApiKey } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import type { QuerySchema } from "../packages/core/src/http/query.ts";
import { parseQuery } from "../packages/core/src/http/query.ts";
import type { AnyDataEndpoint, DataCall } from "../packages/core/src/http/data/data-endpoint.ts";
import { DATA_ENDPOINTS } from "../packages/core/src/http/data/endpoints.ts";
import { hashSecretNode } from "../packages/adapter-node/src/hash-secret-node.ts";
import { installBridgeResponse, simpleResponseParts } from "../packages/adapter-node/src/bridge-response.ts";
import { seedKeys } from "./lib/seed-keys.ts";

installBridgeResponse();
const calls = Number(process.argv[2] ?? 20_000);
const path = process.argv.slice(3).find((a) => !a.startsWith("--")) ?? "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5";
const storage = createMemoryStorage();
await storage.migrate();
const config = defineConfig({ target: "test", tiers: { enterprise: { perMinute: 100_000, perDay: 2_000_000_000 } } });
// A clock that steps 1 ms per reading: what storage does per request (the window's pruning) must not depend on how
// fast the machine runs, or instruction counts would drift with the load.
let tick = Date.UTC(2026, 0, 5, 12);
const clock = { now: (): number => (tick += 1) };
const app = createApp({ storage, config, clock, adminToken: "bench-admin", hashSecret: hashSecretNode });
const keys = await seedKeys({ fetch: app.fetch, adminToken: "bench-admin", keys: 200, environment: "test" });
const data = keys.map((k) => new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${k}` } }));
const health = new Request("http://127.0.0.1/healthz");

async function loop(n: number, request: (i: number) => Request): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await app.fetch(request(i));
    if (r.status !== 200 || simpleResponseParts(r) === undefined) throw new Error(`answered ${r.status}`);
  }
}

const outFile = process.argv.find((a) => a.startsWith("--out="))?.slice(6);
function counted(): number | null {
  const control = (...args: string[]): boolean => spawnSync("callgrind_control", [...args, String(process.pid)]).status === 0;
  if (!control("-d")) return null;
  control("-i", "off");
  const dir = outFile ? dirname(outFile) : "/tmp";
  const dumps = readdirSync(dir).filter((f) => f.includes(`.${process.pid}.`)).sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const last = dumps.at(-1);
  const totals = last ? /^totals:\s*(\d+)/m.exec(readFileSync(`${dir}/${last}`, "utf8")) : null;
  return totals ? Number(totals[1]) : null;
}

async function measure(name: string, request: (i: number) => Request): Promise<void> {
  await loop(calls, request);
  await loop(calls, request);
  spawnSync("callgrind_control", ["-z", String(process.pid)]);
  spawnSync("callgrind_control", ["-i", "on", String(process.pid)]);
  const t = performance.now();
  await loop(calls, request);
  const ms = performance.now() - t;
  const ir = counted();
  console.log(`${name}: ${ir === null ? "(not under callgrind)" : `${Math.round(ir / calls).toLocaleString("en")} instructions per call`}, ${((ms * 1000) / calls).toFixed(2)} µs per call`);
}

async function measureSteps(name: string, step: (i: number) => unknown): Promise<void> {
  const run = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await step(i);
  };
  await run(calls);
  spawnSync("callgrind_control", ["-z", String(process.pid)]);
  spawnSync("callgrind_control", ["-i", "on", String(process.pid)]);
  await run(calls);
  const ir = counted();
  console.log(`  ${name}: ${ir === null ? "(not under callgrind)" : `${Math.round(ir / calls).toLocaleString("en")} instructions per call`}`);
}

await measure("percentile", (i) => data[i % data.length] as Request);
await measure("healthz", () => health);
if (process.argv.includes("--parts")) {
  // The request's parts on their own (each loop also pays its own await): what each costs in instructions.
  const percentile = DATA_ENDPOINTS.find((e) => e.endpoint === "GET /benchmarks/percentile") as AnyDataEndpoint;
  const search = path.slice(path.indexOf("?") + 1);
  const query = parseQuery(percentile.query as QuerySchema, search);
  const source = createSyntheticSource(config.data.syntheticSeed);
  const lookups = await Promise.all(keys.map((k) => storage.findKeyByHash(hashSecretNode(k))));
  const look = (i: number): KeyLookup => lookups[i % lookups.length] as KeyLookup;
  const ctxApp = { config } as unknown as DataCall<unknown>["app"];
  console.log("parts:");
  await measureSteps("await of a resolved promise (the loop's own cost)", () => Promise.resolve(1));
  await measureSteps("hashSecretNode (SHA-256 hex)", (i) => hashSecretNode(keys[i % keys.length] as string));
  await measureSteps("parseApiKey", (i) => parseApiKey(keys[i % keys.length] as string));
  await measureSteps("parseQuery (valibot)", () => parseQuery(percentile.query as QuerySchema, search));
  await measureSteps("storage.findKeyByHash", (i) => storage.findKeyByHash(hashSecretNode(keys[i % keys.length] as string)));
  await measureSteps("storage.admit (test key, expect checked)", (i) => {
    const l = look(i);
    return storage.admit({ now: (tick += 1), keyId: l.key.id, accountId: l.account.id, perMinute: 100_000, perDay: 2_000_000_000, windowMs: 60_000, quota: null, expect: { keyHash: hashSecretNode(keys[i % keys.length] as string), version: l.version } });
  });
  await measureSteps("percentile handler (synthetic source)", (i) => {
    const l = look(i);
    return percentile.handle({ query, request: data[0] as Request, source, dataset: "test", key: l.key, account: l.account, now: tick, app: ctxApp });
  });
  const body = '{"metric":"gross_margin","value":0.5,"category":"saas","segment":"all","period":"2026-Q3","percentile":41.2,"interpretation":"' + "x".repeat(160) + '","context":{"p50":0.7,"p75":0.77,"p90":0.81}}';
  await measureSteps("new Response(json, 4 headers) (light Response)", (i) =>
    new Response(body, { status: 200, headers: { "content-type": "application/json", "x-ratelimit-limit": "100000", "x-ratelimit-remaining": String(99_000 - (i % 1000)), "x-ratelimit-reset": String(1_767_614_400 + (i % 60)) } }),
  );
}
process.exit(0);
