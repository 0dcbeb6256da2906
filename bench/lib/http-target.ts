import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadRequest } from "./measure-load.ts";

/** The repository root, where node_modules/.bin lives. */
export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A server to load: a script that prints `listening <port>` on stdout once it accepts requests. */
export interface HttpTarget {
  /** Label in the report. */
  name: string;
  /** Path of the server script, absolute or relative to the repository root. */
  script: string;
  /** Runtime that runs the script: node (TypeScript through tsx) or bun. Defaults to node. */
  runtime?: "node" | "bun" | "deno";
  /** Extra environment for the server process (PORT is left to the script: 0 means any free port). */
  env?: Record<string, string>;
  /** What to request; defaults to GET /. A function is called once the server listens (e.g. to read the keys it seeded). */
  request?: TargetRequest | (() => TargetRequest);
  /** The floor: other targets report their throughput as a ratio of this one's. */
  baseline?: boolean;
  /**
   * CPU time (ms) spent outside the server process on its behalf so far, e.g. by the database's processes;
   * reported apart from the server's own CPU.
   */
  sideCpuMs?: () => number | null;
  /** A command the runtime runs under, e.g. `["valgrind", "--tool=callgrind"]` (Node targets only). */
  wrapper?: string[];
  /** The Node binary of a Node target (default: the one running the bench). */
  node?: string;
  /** Extra Node flags of a Node target, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
}

/** What a target is asked: one request, or `requests` that every connection cycles through (e.g. one per API key). */
export interface TargetRequest extends LoadRequest {
  requests?: LoadRequest[];
}

/** A target's server process, ready to take load. */
export interface RunningTarget {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The server's process id. */
  pid: number | undefined;
  /** The server's CPU time so far (user + system), ms; null where /proc is unavailable. */
  cpuMs(): number | null;
  /** Terminate the process and wait for it to exit. */
  stop(): Promise<void>;
}

// Linux reports a process's CPU time in /proc/<pid>/stat, in clock ticks (100 per second nearly everywhere).
const TICK_MS = 10;

/** A process's CPU time so far (user + system), ms; null when /proc cannot tell. */
export function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th overall.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

function command(target: HttpTarget): [string, string[]] {
  const script = resolve(repoRoot, target.script);
  if (target.runtime === "bun") return [join(repoRoot, "node_modules/.bin/bun"), [script]];
  if (target.runtime === "deno") return [join(repoRoot, "node_modules/.bin/deno"), ["run", "-A", "--no-check", script]];
  // `--import tsx` runs TypeScript in this one process (the tsx CLI would add a parent process).
  const node = target.node ?? process.execPath;
  const args = [...(target.nodeArgs ?? []), "--import", "tsx", script];
  if (target.wrapper !== undefined && target.wrapper.length > 0) return [target.wrapper[0] as string, [...target.wrapper.slice(1), node, ...args]];
  return [node, args];
}

/** Spawn a target's server and resolve once it prints `listening <port>` (rejects after 30 s). */
export function startTarget(target: HttpTarget): Promise<RunningTarget> {
  const [file, args] = command(target);
  const timeoutMs = target.wrapper === undefined ? 30_000 : 300_000;
  const child: ChildProcess = spawn(file, args, {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: "production", ...target.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${target.name}: no "listening <port>" within ${timeoutMs / 1000} s\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      const match = /^listening (\d+)$/m.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      // Keep draining the pipes so a chatty server never blocks on a full one.
      child.stdout?.resume();
      resolvePromise({ url: `http://127.0.0.1:${match[1]}`, pid: child.pid, cpuMs: () => cpuMsOf(child.pid), stop });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${target.name}: exited (${code ?? signal}) before listening\n${output}`));
    });
  });
}
