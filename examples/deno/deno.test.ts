// The Deno example, run on the real Deno runtime (from the `deno` npm package) and driven over HTTP.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const deno = fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url));
const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const client = fileURLToPath(new URL("./client.ts", import.meta.url));

describe("example: Deno.serve", () => {
  let child: ChildProcess;
  let base = "";
  const admin = "deno-example-admin";

  beforeAll(async () => {
    child = spawn(deno, ["run", "--allow-net", "--allow-env", "--allow-read", main], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      env: { ...process.env, PORT: "0", BENCHDATA_ADMIN_TOKEN: admin, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    base = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`deno did not start: ${err}`)), 60_000);
      child.stdout!.on("data", (c: Buffer) => {
        const m = /listening (\d+)/.exec(c.toString());
        if (m) {
          clearTimeout(t);
          resolve(`http://127.0.0.1:${m[1]}`);
        }
      });
      child.on("exit", (code) => reject(new Error(`deno exited ${code}: ${err}`)));
    });
  }, 90_000);

  afterAll(() => {
    child?.kill("SIGTERM");
  });

  it("serves the whole app: admin bootstrap, console key creation, a data query with rate-limit headers", async () => {
    expect((await (await fetch(`${base}/healthz`)).json())).toEqual({ ok: true });
    const acc = await fetch(`${base}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" }, body: JSON.stringify({ name: "Deno Co", tier: "developer" }) });
    expect(acc.status).toBe(201);
    const { session_token } = (await acc.json()) as { session_token: string };
    const key = await fetch(`${base}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session_token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "k", environment: "test", scopes: ["benchmarks:read"] }) });
    expect(key.status).toBe(201);
    const { raw_key } = (await key.json()) as { raw_key: string };
    const res = await fetch(`${base}/data/v1/benchmarks?category=saas`, { headers: { authorization: `Bearer ${raw_key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    const body = (await res.json()) as { category: string; metrics: Record<string, { p50: number }> };
    expect(body.category).toBe("saas");
    expect(body.metrics.gross_margin!.p50).toBeGreaterThan(0.6);
    const bad = await fetch(`${base}/data/v1/benchmarks?category=toys`, { headers: { authorization: `Bearer ${raw_key}` } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { code: string }).code).toBe("validation.invalid_category");
  });

  it("a Deno program calls it through @benchdata/client: bootstrap, key, a typed answer, a typed refusal", () => {
    expect(existsSync(fileURLToPath(new URL("../../node_modules/@benchdata/client", import.meta.url))), "node_modules/@benchdata/client is missing: run npm install (a new workspace)").toBe(true);
    const r = spawnSync(deno, ["run", "--allow-net", "--allow-env", client], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      env: { ...process.env, BENCHDATA_URL: base, BENCHDATA_ADMIN_TOKEN: admin, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      encoding: "utf8",
      timeout: 90_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const [answer, refusal] = r.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(answer!.percentile).toBeGreaterThanOrEqual(0);
    expect(String(answer!.interpretation)).toMatch(/churn/i);
    expect(answer!.remaining).toBe(59);
    expect(refusal).toEqual({ refused: "auth.insufficient_scope", status: 403 });
  }, 120_000);
});
