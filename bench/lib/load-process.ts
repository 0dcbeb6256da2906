// Drives bench/lib/load-worker.ts: one forked process that runs every load (autocannon), so the load
// generator never shares a process with the servers or with the orchestrator.
import { fork } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./http-target.ts";
import type { LoadOptions, LoadResult } from "./measure-load.ts";

/** The load generator's process. */
export interface LoadProcess {
  readonly pid: number;
  /** Runs one load; resolves with autocannon's figures and the generator's CPU per request (µs). */
  run(load: LoadOptions): Promise<LoadResult & { clientCpuMicrosPerRequest: number }>;
  stop(): void;
}

interface Answer {
  id?: number;
  ready?: boolean;
  result?: LoadResult;
  cpuMicros?: number;
  error?: string;
}

/** Forks the load generator and resolves once it is ready. */
export function startLoadProcess(): Promise<LoadProcess> {
  const child = fork(join(repoRoot, "bench/lib/load-worker.ts"), [], {
    cwd: repoRoot,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  let next = 1;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      const error = new Error(`the load generator exited (${code})`);
      reject(error);
      for (const w of waiting.values()) w.reject(error);
    });
    child.on("message", (answer: Answer) => {
      if (answer.ready) {
        resolve({
          pid: child.pid as number,
          run: (load) =>
            new Promise((done, fail) => {
              const id = next++;
              waiting.set(id, {
                resolve: (a) => {
                  if (a.error !== undefined || a.result === undefined) fail(new Error(a.error ?? "no result"));
                  else done({ ...a.result, clientCpuMicrosPerRequest: a.result.total === 0 ? 0 : (a.cpuMicros ?? 0) / a.result.total });
                },
                reject: fail,
              });
              child.send({ id, load });
            }),
          stop: () => void child.kill("SIGTERM"),
        });
        return;
      }
      if (answer.id === undefined) return;
      const w = waiting.get(answer.id);
      waiting.delete(answer.id);
      w?.resolve(answer);
    });
  });
}
