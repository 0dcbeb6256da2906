// The full service (auth pipeline, console, data endpoints) on the real Bun runtime.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bun = fileURLToPath(new URL("../../../node_modules/.bin/bun", import.meta.url));
const fixture = fileURLToPath(new URL("./app-fixture.ts", import.meta.url));

describe("benchdata on Bun", () => {
  let child: ChildProcess;
  let base = "";
  beforeAll(async () => {
    expect(existsSync(bun), `bun binary missing at ${bun}`).toBe(true);
    child = spawn(bun, [fixture], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    base = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`bun did not start: ${err}`)), 30_000);
      child.stdout!.on("data", (c: Buffer) => {
        const m = /listening (\d+)/.exec(c.toString());
        if (m) {
          clearTimeout(t);
          resolve(`http://127.0.0.1:${m[1]}`);
        }
      });
      child.on("exit", (code) => reject(new Error(`bun exited ${code}: ${err}`)));
    });
  }, 60_000);
  afterAll(() => {
    child?.kill("SIGTERM");
  });

  it("bootstraps an account, creates a key, answers data requests and enforces the pipeline", async () => {
    const acc = await fetch(`${base}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: "Bearer bun-admin", "content-type": "application/json" }, body: JSON.stringify({ name: "Bun Co", tier: "developer" }) });
    expect(acc.status).toBe(201);
    const { session_token } = (await acc.json()) as { session_token: string };
    const created = await fetch(`${base}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session_token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "k", environment: "test", scopes: ["benchmarks:read"] }) });
    expect(created.status).toBe(201);
    const { raw_key } = (await created.json()) as { raw_key: string };
    const hist = await fetch(`${base}/data/v1/benchmarks/distribution?metric=take_rate&category=marketplace&buckets=5`, { headers: { authorization: `Bearer ${raw_key}` } });
    expect(hist.status).toBe(200);
    const body = (await hist.json()) as { histogram: { count: number }[]; sample_size: number };
    expect(body.histogram).toHaveLength(5);
    expect(body.histogram.reduce((s, b) => s + b.count, 0)).toBe(body.sample_size);
    const noScope = await fetch(`${base}/data/v1/segments?category=saas`, { headers: { authorization: `Bearer ${raw_key}` } });
    expect(noScope.status).toBe(403);
    expect(((await noScope.json()) as { code: string }).code).toBe("auth.insufficient_scope");
    const missing = await fetch(`${base}/data/v1/benchmarks`);
    expect(missing.status).toBe(401);
  });
});
