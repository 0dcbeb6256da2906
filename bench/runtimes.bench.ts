/**
 * `npm run bench:runtimes`: the benchdata CLI on each runtime, against a bare floor of the same runtime, with
 * the method of `npm run bench` (the server, its floor and the load generator each in their own process;
 * each server run sits between two floor runs of its runtime; median of rounds).
 *
 *   node     node packages/cli/bin/benchdata.js serve   (node:http, better-sqlite3) vs a bare node:http handler
 *   bun      bun  packages/cli/bin/benchdata.js serve   (Bun.serve, bun:sqlite)     vs a bare Bun.serve handler
 *   deno     deno run -A …/benchdata.js serve                    (Deno.serve, node:sqlite)   vs a bare Deno.serve handler
 *   binary   dist/benchdata serve (npm run build:binary)         (Bun.serve, bun:sqlite)     vs the bare Bun.serve handler
 *
 * Store: SQLite (a temp file), the embedded default. Shape: hot (2 test keys of one account, 50 connections,
 * limits raised so nothing is refused). Request: GET /data/v1/benchmarks/percentile.
 *
 *   npm run bench:runtimes                 3 rounds × 5 s (+1 s warm-up)
 *   npm run bench:runtimes -- --quick      2 rounds × 2 s
 *   --runtimes=node,bun,deno,binary   --rounds=N   --seconds=N   --connections=N
 *
 * Writes bench/results/runtimes-latest.md (bench/results is git-ignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_BIN, type CliServer, seedOverHttp, startCliServer } from "./lib/cli-server.ts";
import { repoRoot, type RunningTarget, startTarget } from "./lib/http-target.ts";
import { type LoadProcess, startLoadProcess } from "./lib/load-process.ts";
import type { LoadRequest } from "./lib/measure-load.ts";

const PATH = "/data/v1/benchmarks/percentile?category=saas&metric=gross_margin&value=0.5";
const HOST = "sandbox.localhost";
const ADMIN_TOKEN = "bench-admin-token-0123456789abcdefghij";
const BINARY = join(repoRoot, "dist/benchdata");

type Runtime = "node" | "bun" | "deno" | "binary";
const bin = (name: string): string => join(repoRoot, "node_modules/.bin", name);
const RUNTIMES: Record<Runtime, { cli: string[]; floor: { script: string; runtime: "node" | "bun" | "deno" }; label: string }> = {
  node: { cli: [process.execPath, CLI_BIN], floor: { script: "bench/lib/target-node-floor.ts", runtime: "node" }, label: "Node (node:http, better-sqlite3)" },
  bun: { cli: [bin("bun"), CLI_BIN], floor: { script: "bench/lib/target-bun-static.ts", runtime: "bun" }, label: "Bun (Bun.serve, bun:sqlite)" },
  deno: { cli: [bin("deno"), "run", "-A", CLI_BIN], floor: { script: "bench/lib/target-deno-static.ts", runtime: "deno" }, label: "Deno (Deno.serve, node:sqlite)" },
  binary: { cli: [BINARY], floor: { script: "bench/lib/target-bun-static.ts", runtime: "bun" }, label: "single executable (Bun.serve, bun:sqlite)" },
};

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes("--quick");
const rounds = Number(arg("rounds") ?? (quick ? 2 : 3));
const seconds = Number(arg("seconds") ?? (quick ? 2 : 5));
const connections = Number(arg("connections") ?? 50);
const wanted = (arg("runtimes") ?? "node,bun,deno,binary").split(",") as Runtime[];
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Entry {
  runtime: Runtime;
  floor: RunningTarget;
  server: CliServer;
  requests: LoadRequest[];
  ratios: number[];
  rps: number[];
  floorRps: number[];
}

async function run(generator: LoadProcess, url: string, requests: LoadRequest[]): Promise<number> {
  await generator.run({ url, connections, seconds: 1, requests });
  const r = await generator.run({ url, connections, seconds, requests });
  if (r.non2xx + r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors ${JSON.stringify(r.statusCodes)}`);
  return r.requestsPerSecond;
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "benchdata-runtimes-bench-"));
  const config = join(tmp, "config.json");
  writeFileSync(config, JSON.stringify({ tiers: { enterprise: { perMinute: 1_000_000, perDay: 2_147_483_647 } } }));
  const entries: Entry[] = [];
  const generator = await startLoadProcess();
  try {
    for (const runtime of wanted) {
      const r = RUNTIMES[runtime];
      if (runtime === "binary" && !existsSync(BINARY)) {
        log(`binary: ${BINARY} missing (npm run build:binary); left out`);
        continue;
      }
      const floor = await startTarget({ name: `${runtime} floor`, script: r.floor.script, runtime: r.floor.runtime });
      const server = await startCliServer({ db: `sqlite:${join(tmp, `${runtime}.db`)}`, configFile: config, adminToken: ADMIN_TOKEN, command: r.cli });
      const keys = await seedOverHttp({ url: server.url, adminToken: ADMIN_TOKEN, accounts: 1, keysPerAccount: 2 });
      const requests = keys.map((k) => ({ method: "GET", path: PATH, headers: { authorization: `Bearer ${k}`, host: HOST } }));
      entries.push({ runtime, floor, server, requests, ratios: [], rps: [], floorRps: [] });
      log(`${runtime}: serving on ${server.url}, floor on ${floor.url}`);
    }
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}/${rounds} (load average ${loadavg()[0]!.toFixed(2)})`);
      for (const e of round % 2 ? entries : [...entries].reverse()) {
        const floorPath = [{ method: "GET", path: "/" }];
        const before = await run(generator, e.floor.url, floorPath);
        const served = await run(generator, e.server.url, e.requests);
        const after = await run(generator, e.floor.url, floorPath);
        const floorRps = (before + after) / 2;
        e.ratios.push(served / floorRps);
        e.rps.push(served);
        e.floorRps.push(floorRps);
        log(`  ${e.runtime.padEnd(7)} ${Math.round(served)} req/s, floor ${Math.round(floorRps)} req/s, ratio ${(served / floorRps).toFixed(3)}`);
      }
    }
  } finally {
    generator.stop();
    for (const e of entries) await Promise.all([e.server.stop(), e.floor.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  }
  const nodeFloor = entries.find((e) => e.runtime === "node");
  const lines = [
    `# benchdata serve on each runtime (SQLite, hot shape: 2 keys, ${connections} connections; ${rounds} rounds × ${seconds} s; ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(2)})`,
    "",
    "| runtime | ratio to its own floor (median) | req/s (median) | its floor req/s | ratio to the Node floor | ratios by round |",
    "|---|---:|---:|---:|---:|---|",
    ...entries.map(
      (e) =>
        `| ${RUNTIMES[e.runtime].label} | **${median(e.ratios).toFixed(3)}** | ${Math.round(median(e.rps))} | ${Math.round(median(e.floorRps))} | ${nodeFloor ? (median(e.rps) / median(nodeFloor.floorRps)).toFixed(3) : "-"} | ${e.ratios.map((x) => x.toFixed(3)).join(" / ")} |`,
    ),
  ];
  const text = lines.join("\n");
  console.log(text);
  mkdirSync(join(repoRoot, "bench/results"), { recursive: true });
  writeFileSync(join(repoRoot, "bench/results/runtimes-latest.md"), `${text}\n`);
}

await main();
