// Helpers for tests that drive real `benchdata` processes over HTTP.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import pg from "pg";

export const BIN = fileURLToPath(new URL("../bin/benchdata.js", import.meta.url));
export const REPO = fileURLToPath(new URL("../../..", import.meta.url));

/** A response read whole. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** An HTTP request with full control of headers (fetch drops Host). */
export function http(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(url, { method: options.method ?? "GET", agent, headers: { ...(body ? { "content-type": "application/json" } : {}), ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = undefined;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

/** A running `benchdata serve` process. */
export interface Instance {
  url: string;
  port: number;
  child: ChildProcess;
  logs: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A JavaScript runtime that runs the CLI: Node, or the real Bun and Deno from their npm packages. */
export type Runtime = "node" | "bun" | "deno";

/** The command that runs the CLI with `args` on `runtime`. */
export function cliCommand(runtime: Runtime, args: string[]): [string, string[]] {
  if (runtime === "bun") return [fileURLToPath(new URL("../../../node_modules/.bin/bun", import.meta.url)), [BIN, ...args]];
  if (runtime === "deno") return [fileURLToPath(new URL("../../../node_modules/.bin/deno", import.meta.url)), ["run", "-A", BIN, ...args]];
  return [process.execPath, [BIN, ...args]];
}

/** Starts `benchdata serve --port 0` (on Node unless another runtime is named) and waits for its "listening" log line. */
export function startServe(args: string[], env: Record<string, string> = {}, runtime: Runtime = "node"): Promise<Instance> {
  return new Promise((resolve, reject) => {
    const [command, commandArgs] = cliCommand(runtime, ["serve", "--port", "0", "--host", "127.0.0.1", ...args]);
    const child = spawn(command, commandArgs, {
      cwd: REPO,
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const logs: string[] = [];
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${logs.join("\n")}`)), 30_000);
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    child.stderr!.on("data", (c: Buffer) => logs.push(c.toString()));
    child.stdout!.on("data", (c: Buffer) => {
      buf += c.toString();
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line);
          if (entry.msg === "listening") {
            clearTimeout(timer);
            resolve({
              url: `http://127.0.0.1:${entry.port}`,
              port: entry.port,
              child,
              logs,
              stop: async (signal = "SIGTERM") => {
                if (child.exitCode === null) child.kill(signal);
                return exited;
              },
            });
          }
        } catch {
          // not a JSON line
        }
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${logs.join("\n")}`));
    });
  });
}

/** Runs the CLI to completion. */
export function cli(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const PG_ADMIN = process.env.BENCHDATA_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Whether PostgreSQL answers; when BENCHDATA_REQUIRE_PG=1 an unreachable server is an error, not a skip. */
export async function pgAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (e) {
    if (process.env.BENCHDATA_REQUIRE_PG === "1") throw new Error(`BENCHDATA_REQUIRE_PG=1 but PostgreSQL is unreachable at ${PG_ADMIN}: ${(e as Error).message}`);
    console.warn(`PostgreSQL unreachable at ${PG_ADMIN}: skipping PostgreSQL suites (set BENCHDATA_REQUIRE_PG=1 to fail instead)`);
    return false;
  }
}

/** Creates a database with a unique name; returns its URL and a drop function. */
export async function tempDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = PG_ADMIN.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
