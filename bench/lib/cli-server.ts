// The real `benchdata serve` (the built CLI, packages/cli/bin/benchdata.js: webhook and billing
// workers on, as the CLI runs them by default) in a process of its own, and its seeding through the admin and
// console APIs over HTTP, as an operator would do it.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { cpuMsOf, repoRoot } from "./http-target.ts";

/** A running `benchdata serve`. */
export interface CliServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The server's CPU time so far (user + system), ms; null where /proc is unavailable. */
  cpuMs(): number | null;
  /** SIGTERM (the CLI drains and exits 0) and wait for the exit; SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** Everything the process wrote, for error messages. */
  output(): string;
}

/** How to start one. */
export interface CliServerOptions {
  /** --db: `memory:`, `sqlite:PATH`, `postgres://…` */
  db: string;
  /** --config FILE */
  configFile?: string;
  adminToken: string;
  /** Extra Node flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** A command Node runs under, e.g. `["valgrind", "--tool=callgrind"]`. */
  wrapper?: string[];
  /** The Node binary (default: the one running this code). */
  node?: string;
  /** Working directory (where --cpu-prof writes by default). */
  cwd?: string;
  /** The command that runs the CLI instead of `node CLI_BIN`, e.g. `["bun", CLI_BIN]` or a single executable. */
  command?: readonly string[];
  /** The CLI entry to run (default CLI_BIN): another checkout's build, to measure two versions side by side. */
  bin?: string;
}

/** The CLI entry the package's `bin` names. */
export const CLI_BIN = join(repoRoot, "packages/cli/bin/benchdata.js");

/** Starts `benchdata serve --port 0 --host 127.0.0.1` and resolves once it logs `listening` (rejects after 60 s). */
export function startCliServer(options: CliServerOptions): Promise<CliServer> {
  const serveArgs = ["serve", "--db", options.db, "--port", "0", "--host", "127.0.0.1"];
  if (options.configFile !== undefined) serveArgs.push("--config", options.configFile);
  const args = [...(options.nodeArgs ?? []), options.bin ?? CLI_BIN, ...serveArgs];
  const wrapper = options.wrapper ?? [];
  const node = options.node ?? process.execPath;
  const [file, argv] =
    options.command !== undefined
      ? [options.command[0] as string, [...options.command.slice(1), ...serveArgs]]
      : wrapper.length > 0
        ? [wrapper[0] as string, [...wrapper.slice(1), node, ...args]]
        : [node, args];
  const child: ChildProcess = spawn(file, argv, {
    cwd: options.cwd ?? repoRoot,
    // A PostgreSQL deployment must configure the operator key sealing webhook secrets (a fixed one will do here).
    env: { ...process.env, NODE_ENV: "production", BENCHDATA_ADMIN_TOKEN: options.adminToken, BENCHDATA_WEBHOOK_KEYS: `bench:${Buffer.alloc(32, 1).toString("base64")}`, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let listening = false;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const timeoutMs = wrapper.length > 0 ? 600_000 : 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`benchdata serve --db ${options.db}: not listening within ${timeoutMs / 1000} s\n${output.slice(-2000)}`));
    }, timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      // Keep only the start of the log (the server logs little, but never let it grow without bound).
      if (output.length < 100_000) output += chunk.toString("utf8");
      if (listening) return;
      for (const line of output.split("\n")) {
        if (!line.startsWith("{") || !line.includes('"listening"')) continue;
        let entry: { msg?: string; port?: number };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue;
        }
        if (entry.msg !== "listening" || typeof entry.port !== "number") continue;
        listening = true;
        clearTimeout(timer);
        const port = entry.port;
        resolve({
          url: `http://127.0.0.1:${port}`,
          port,
          pid: child.pid as number,
          cpuMs: () => cpuMsOf(child.pid),
          stop,
          output: () => output,
        });
        return;
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString("utf8");
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!listening) reject(new Error(`benchdata serve --db ${options.db} exited (${code ?? signal}) before listening\n${output.slice(-2000)}`));
    });
  });
}

async function call(base: string, path: string, token: string, body: unknown, method = "POST"): Promise<Record<string, unknown>> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`seeding: ${method} ${path} answered ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates `accounts` enterprise accounts with `keysPerAccount` test keys each (`benchmarks:read`); returns the raw keys, account by account. */
export async function seedOverHttp(options: {
  url: string;
  adminToken: string;
  accounts: number;
  keysPerAccount: number;
  progress?: (done: number, total: number) => void;
}): Promise<string[]> {
  const total = options.accounts * options.keysPerAccount;
  const raw: string[] = [];
  for (let a = 0; a < options.accounts; a++) {
    const account = await call(options.url, "/api/v1/admin/accounts", options.adminToken, { name: `bench ${a}`, tier: "enterprise" });
    const session = account.session_token as string;
    // Up to 10 key creations in flight: seeding is not what is measured.
    for (let k = 0; k < options.keysPerAccount; k += 10) {
      const batch = Array.from({ length: Math.min(10, options.keysPerAccount - k) }, (_, i) =>
        call(options.url, "/api/v1/console/keys", session, { name: `bench ${a}.${k + i}`, environment: "test", scopes: ["benchmarks:read"] }),
      );
      for (const key of await Promise.all(batch)) raw.push(key.raw_key as string);
      options.progress?.(raw.length, total);
    }
  }
  return raw;
}
