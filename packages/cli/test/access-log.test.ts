// The access log through a real `benchdata serve`: off by default, on with BENCHDATA_LOG_ACCESS, one line per
// request carrying the answer's X-Request-Id, the route template and a key's prefix, never a secret.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN, importLiveData, liveHeaders, liveKey, logLines, QUERY, writeConfig } from "./fault-fixture.ts";
import type { Instance } from "./helpers.ts";
import { http, startServe } from "./helpers.ts";

describe("access log (benchdata serve)", () => {
  const dir = mkdtempSync(join(tmpdir(), "bd-access-"));
  const nodes: Instance[] = [];
  afterAll(async () => {
    for (const n of nodes) await n.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes one secret-free JSON line per request when BENCHDATA_LOG_ACCESS=true, and none by default", async () => {
    const db = `sqlite:${join(dir, "a.db")}`;
    const config = writeConfig(dir);
    importLiveData(dir, db);
    const env = { BENCHDATA_ADMIN_TOKEN: ADMIN };
    const quiet = await startServe(["--db", db, "--config", config], env);
    nodes.push(quiet);
    const q = await http(`${quiet.url}/healthz`);
    expect(q.headers["x-request-id"]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    await quiet.stop();
    expect(logLines(quiet).filter((l) => l.msg === "request")).toEqual([]);

    const node = await startServe(["--db", db, "--config", config], { ...env, BENCHDATA_LOG_ACCESS: "true" });
    nodes.push(node);
    const { rawKey, session } = await liveKey(node);
    const data = await http(`${node.url}${QUERY}&secret_param=hunter2`, { headers: { ...liveHeaders(rawKey), "x-request-id": "lb-trace-7" } });
    expect(data.status, data.text).toBe(200);
    expect(data.headers["x-request-id"]).toBe("lb-trace-7");
    const bad = await http(`${node.url}/data/v1/benchmarks?category=saas`, { headers: { host: "api.localhost", authorization: "Bearer svc_live_" + "Z".repeat(48) } });
    expect(bad.status).toBe(401);
    const keys = await http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${session}` } });
    expect(keys.status).toBe(200);
    await node.stop();

    const lines = logLines(node).filter((l) => l.msg === "request");
    const of = (id: string) => lines.find((l) => l.request_id === id);
    expect(of("lb-trace-7")).toMatchObject({ level: "info", method: "GET", route: "/data/v1/benchmarks/percentile", status: 200, key_prefix: rawKey.slice(0, 12) });
    expect(typeof of("lb-trace-7")!.time).toBe("string");
    expect(typeof of("lb-trace-7")!.duration_ms).toBe("number");
    expect(of(String(bad.headers["x-request-id"]))).toMatchObject({ route: "/data/v1/benchmarks", status: 401, key_prefix: "svc_live_ZZZ" });
    expect(of(String(keys.headers["x-request-id"]))).toMatchObject({ route: "/api/v1/console/keys", status: 200 });
    expect(of(String(keys.headers["x-request-id"]))!.key_prefix).toBeUndefined();
    // The admin and console calls of liveKey are logged too: one line per request.
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const text = node.logs.join("\n");
    for (const secret of [rawKey, rawKey.slice(12), session, ADMIN, "Z".repeat(48), "hunter2", "secret_param", "value=0.15", "authorization"]) expect(text).not.toContain(secret);
  }, 40_000);
});
