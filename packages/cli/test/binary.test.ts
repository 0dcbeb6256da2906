// benchdata as one self-contained executable (scripts/build-binary.mjs, `bun build --compile`): built,
// copied alone into an empty folder, and run there with nothing beside it (no node_modules, no runtime
// on PATH): `demo`, then `serve` with an account, a key, a query answering 200, and a restart that keeps
// the data.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, REPO } from "./helpers.ts";

const ADMIN = "binary-admin-token-0123456789abcdefghijk";
const build = mkdtempSync(join(tmpdir(), "benchdata-binary-build-"));
const empty = mkdtempSync(join(tmpdir(), "benchdata-binary-run-"));
const exe = join(empty, "benchdata");
// Nothing of the machine's: no PATH (so no node, bun or deno), a HOME of its own.
const bareEnv = { PATH: "", HOME: empty, NO_COLOR: "1" };
afterAll(() => {
  rmSync(build, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

interface Served {
  url: string;
  stop(): Promise<number | null>;
  logs: string[];
}

function start(args: string[], env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { cwd: empty, env: { ...bareEnv, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const logs: string[] = [];
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const t = setTimeout(() => reject(new Error(`binary did not start:\n${logs.join("")}`)), 30_000);
    child.stderr.on("data", (c: Buffer) => logs.push(c.toString()));
    child.stdout.on("data", (c: Buffer) => {
      logs.push(c.toString());
      const m = /"msg":"listening".*?"port":(\d+)/.exec(c.toString());
      if (m) {
        clearTimeout(t);
        resolve({ url: `http://127.0.0.1:${m[1]}`, logs, stop: async () => (child.kill("SIGTERM"), exited) });
      }
    });
    child.on("exit", (code) => reject(new Error(`binary exited ${code}:\n${logs.join("")}`)));
  });
}

describe("benchdata as a single executable", () => {
  beforeAll(() => {
    const out = join(build, "benchdata");
    const r = spawnSync(process.execPath, [join(REPO, "scripts/build-binary.mjs"), "--outfile", out], { cwd: REPO, encoding: "utf8", timeout: 240_000 });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    copyFileSync(out, exe);
    spawnSync("chmod", ["+x", exe]);
    expect(readdirSync(empty)).toEqual(["benchdata"]);
    expect(statSync(exe).size).toBeGreaterThan(1_000_000);
  }, 300_000);

  it("demo runs from an empty folder: a seeded account, a test key, a real answer", async () => {
    const child = spawn(exe, ["demo", "--port", "0"], { cwd: empty, env: bareEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`demo did not finish:\n${out}`)), 60_000);
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("Ctrl-C stops the demo.")) {
            clearTimeout(t);
            resolve();
          }
        });
        child.stderr.on("data", (c: Buffer) => (out += c.toString()));
        child.on("exit", (code) => reject(new Error(`demo exited ${code}:\n${out}`)));
      });
      expect(out).toMatch(/test key {4}svc_test_\S+/);
      expect(out).toMatch(/-> {2}200/);
    } finally {
      child.kill("SIGTERM");
    }
  }, 90_000);

  it("serve from an empty folder on its embedded SQLite: account, key, a 200 query; a restart keeps the data", async () => {
    const env = { BENCHDATA_ADMIN_TOKEN: ADMIN };
    const args = ["serve", "--port", "0", "--host", "127.0.0.1", "--db", "sqlite:./data.db"];
    const first = await start(args, env);
    let key = "";
    try {
      expect(first.logs.join("")).toContain('"storage_driver":"bun:sqlite"');
      const acc = await http(`${first.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, body: { name: "Binary Co", tier: "growth" } });
      expect(acc.status).toBe(201);
      const k = await http(`${first.url}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${acc.json.session_token}` }, body: { name: "k", environment: "test", scopes: ["benchmarks:read"] } });
      expect(k.status).toBe(201);
      key = k.json.raw_key;
      const q = await http(`${first.url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      expect(q.status, q.text).toBe(200);
      // The browser console's files are inside the executable too.
      const page = await http(`${first.url}/console/`);
      expect(page.status).toBe(200);
      expect(page.text).toContain("/console/console.js");
      expect((await http(`${first.url}/console/console.js`)).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await start(args, env);
    try {
      const q = await http(`${second.url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas`, { headers: { authorization: `Bearer ${key}`, host: "test.example" } });
      expect(q.status, q.text).toBe(200);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(readdirSync(empty).sort()).toEqual(expect.arrayContaining(["benchdata", "data.db"]));
  }, 120_000);
});
