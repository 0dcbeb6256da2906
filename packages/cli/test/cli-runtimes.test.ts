// The benchdata CLI on the real Bun and Deno runtimes: `serve` on the runtime's own HTTP server
// (Bun.serve, Deno.serve) and its own SQLite driver (bun:sqlite, node:sqlite), data kept across a
// restart, a clean drain on SIGTERM; and `demo`, which seeds an account and answers a real query.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliCommand, http, REPO, startServe } from "./helpers.ts";
import type { Runtime } from "./helpers.ts";

const ADMIN = "runtime-admin-token-0123456789abcdefghij";
const EXPECT: Record<Exclude<Runtime, "node">, { server: string; driver: string }> = {
  bun: { server: "Bun.serve", driver: "bun:sqlite" },
  deno: { server: "Deno.serve", driver: "node:sqlite" },
};
const dir = mkdtempSync(join(tmpdir(), "benchdata-cli-rt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const listening = (logs: string[]): Record<string, unknown> => JSON.parse(logs.find((l) => l.includes('"msg":"listening"'))!) as Record<string, unknown>;

describe.each(["bun", "deno"] as const)("benchdata CLI on %s", (runtime) => {
  it("serve: the runtime's own server and SQLite driver; account, key, a 200 query; a restart keeps the data", async () => {
    const db = `sqlite:${join(dir, `${runtime}.db`)}`;
    const env = { BENCHDATA_ADMIN_TOKEN: ADMIN };
    const first = await startServe(["--db", db], env, runtime);
    let key = "";
    try {
      expect(listening(first.logs)).toMatchObject({ http_server: EXPECT[runtime].server, storage_driver: EXPECT[runtime].driver });
      const acc = await http(`${first.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, body: { name: `${runtime} Co`, tier: "growth" } });
      expect(acc.status).toBe(201);
      const k = await http(`${first.url}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${acc.json.session_token}` }, body: { name: "k", environment: "test", scopes: ["benchmarks:read"] } });
      expect(k.status).toBe(201);
      key = k.json.raw_key;
      const q = await http(`${first.url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      expect(q.status, q.text).toBe(200);
      expect(q.json.percentile).toBeGreaterThan(0);
      expect(q.headers["x-ratelimit-limit"]).toBeDefined();
    } finally {
      expect(await first.stop("SIGTERM")).toBe(0);
    }
    // The second instance drains with a delay: on SIGTERM /readyz turns 503 while data requests are still served.
    const second = await startServe(["--db", db], { ...env, BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: "1" }, runtime);
    try {
      const q = await http(`${second.url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      expect(q.status, q.text).toBe(200);
      const usage = await http(`${second.url}/data/v1/benchmarks?category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      // The key's request before the restart is still in its window: the window lives in the file.
      expect(Number(usage.headers["x-ratelimit-remaining"])).toBeLessThan(Number(usage.headers["x-ratelimit-limit"]) - 1);
      const exit = new Promise<number | null>((resolve) => second.child.once("exit", (code) => resolve(code)));
      second.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await http(`${second.url}/readyz`)).json).toMatchObject({ ready: false, reason: "draining" });
      const during = await http(`${second.url}/data/v1/benchmarks?category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      expect(during.status, during.text).toBe(200);
      expect(await exit).toBe(0);
    } finally {
      await second.stop("SIGKILL");
    }
  }, 120_000);

  it("demo: seeds an account and a test key, and prints a real answer", async () => {
    const [command, args] = cliCommand(runtime, ["demo", "--port", "0", "--db", `sqlite:${join(dir, `${runtime}-demo.db`)}`]);
    const child = spawn(command, args, { cwd: REPO, env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`demo did not finish:\n${out}\n${err}`)), 60_000);
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("Ctrl-C stops the demo.")) {
            clearTimeout(t);
            resolve();
          }
        });
        child.on("exit", (code) => reject(new Error(`demo exited ${code}:\n${out}\n${err}`)));
      });
      expect(out).toMatch(/test key {4}svc_test_\S+/);
      expect(out).toMatch(/-> {2}200/);
      expect(out).toContain('"percentile"');
    } finally {
      child.kill("SIGTERM");
    }
  }, 90_000);
});
