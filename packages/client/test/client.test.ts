// @benchdata/client against a real `benchdata serve` (the built CLI, SQLite): every operation once, the error codes,
// 429 with retry on and off, and the same checks again on the real Bun and Deno runtimes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "../../adapter-node/test/helpers.ts";
import type { Instance } from "../../adapter-node/test/helpers.ts";
import { Benchdata, BenchdataError, OPERATIONS } from "../src/index.ts";
import { runChecks } from "./checks.ts";

const ADMIN = "client-test-admin-token-0123456789abcdef";
const RUN_CHECKS = fileURLToPath(new URL("./run-checks.ts", import.meta.url));
const BIN = (name: string): string => fileURLToPath(new URL(`../../../node_modules/.bin/${name}`, import.meta.url));

let dir = "";
let server: Instance;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "benchdata-client-"));
  const config = join(dir, "config.json");
  // Test keys on 127.0.0.1 need target "test". The checks register a webhook on a local port; plain HTTP and
  // loopback are allowed for that only here.
  writeFileSync(config, JSON.stringify({ target: "test", webhooks: { allowHttp: true, allowPrivateNetworks: true, timeoutSeconds: 2 } }));
  server = await startServe(["--db", `sqlite:${join(dir, "client.db")}`, "--config", config], { BENCHDATA_ADMIN_TOKEN: ADMIN });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("@benchdata/client on Node against benchdata serve (SQLite)", () => {
  it("every operation of /openapi.json has a method, and the checks call every one of them", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const served = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)).sort();
    expect(Object.keys(OPERATIONS).sort()).toEqual(served);
    for (const id of served) expect(typeof (Benchdata.prototype as unknown as Record<string, unknown>)[id], id).toBe("function");
    const report = await runChecks({ baseUrl: server.url, adminToken: ADMIN }, "node");
    // A new route needs a call in test/checks.ts (after npm run generate:client gave it a method).
    expect(served.filter((id) => !(report.called as string[]).includes(id)), "operations test/checks.ts does not call").toEqual([]);
  }, 60_000);

  it("retry: a 429 with a short Retry-After is retried and succeeds; 402 and a 503 on POST never are; off by default", async () => {
    const admin = new Benchdata({ baseUrl: server.url, adminToken: ADMIN });
    const acc = await admin.adminCreateAccount({ name: "retry", tier: "developer" });
    const key = await new Benchdata({ baseUrl: server.url, sessionToken: acc.data.session_token }).createKey({ name: "k", environment: "test", scopes: ["benchmarks:read"] });
    // The first answer of each call is replaced by a refusal; later attempts reach the real server.
    const refusing = (status: number, retryAfter: string | null): { fetch: (r: Request) => Promise<Response>; attempts: () => number } => {
      let n = 0;
      return {
        attempts: () => n,
        fetch: async (r: Request) => {
          n++;
          if (n > 1) return fetch(r);
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (retryAfter !== null) headers["retry-after"] = retryAfter;
          const code = status === 429 ? "rate_limit.exceeded" : status === 402 ? "quota.exhausted" : "service.unavailable";
          return new Response(JSON.stringify({ detail: "refused", code, status }), { status, headers });
        },
      };
    };
    const client = (f: (r: Request) => Promise<Response>, retry: boolean | { baseDelayMs: number }): Benchdata => new Benchdata({ baseUrl: server.url, apiKey: key.data.raw_key, fetch: f, retry });

    const r429 = refusing(429, "0");
    expect((await client(r429.fetch, true).getBenchmarks({ category: "saas" })).status).toBe(200);
    expect(r429.attempts()).toBe(2);

    const off = refusing(429, "0");
    const e429 = await client(off.fetch, false).getBenchmarks({ category: "saas" }).catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(BenchdataError);
    expect(off.attempts()).toBe(1);

    const r402 = refusing(402, null);
    const e402 = (await client(r402.fetch, true).getBenchmarks({ category: "saas" }).catch((e: unknown) => e)) as BenchdataError;
    expect([e402.status, e402.code, r402.attempts()]).toEqual([402, "quota.exhausted", 1]);

    const r503get = refusing(503, null);
    expect((await client(r503get.fetch, { baseDelayMs: 1 }).getBenchmarks({ category: "saas" })).status).toBe(200);
    expect(r503get.attempts()).toBe(2);

    const r503post = refusing(503, null);
    const e503 = (await client(r503post.fetch, { baseDelayMs: 1 }).createMerchantSnapshot({ merchant_id: "m", category: "saas", period: "2026-Q1", metrics: {} }).catch((e: unknown) => e)) as BenchdataError;
    expect([e503.status, e503.code, r503post.attempts()]).toEqual([503, "service.unavailable", 1]);
  });

  it("timeout and abort: a server that never answers gives client.timeout; an aborted call gives client.aborted", async () => {
    const hang = (r: Request): Promise<Response> => new Promise((_, reject) => r.signal.addEventListener("abort", () => reject(r.signal.reason)));
    const c = new Benchdata({ baseUrl: server.url, apiKey: "svc_test_x", fetch: hang, timeoutMs: 20 });
    const timeout = (await c.getBenchmarks({ category: "saas" }).catch((e: unknown) => e)) as BenchdataError;
    expect([timeout.status, timeout.code]).toEqual([0, "client.timeout"]);
    const controller = new AbortController();
    const pending = new Benchdata({ baseUrl: server.url, fetch: hang }).getBenchmarks({ category: "saas" }, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort();
    expect(((await pending) as BenchdataError).code).toBe("client.aborted");
    const refused = (await new Benchdata({ baseUrl: "http://127.0.0.1:9" }).healthz().catch((e: unknown) => e)) as BenchdataError;
    expect(refused.code).toBe("client.network_error");
  });

  it("sends the user-agent and the credential each operation needs, nothing else", async () => {
    const seen: Request[] = [];
    const c = new Benchdata({ baseUrl: server.url + "/", apiKey: "svc_test_k", sessionToken: "bds_sess_s", adminToken: "adm", userAgent: "my-app/1.0", fetch: (r) => (seen.push(r), Promise.resolve(new Response("{}", { headers: { "content-type": "application/json" } }))) });
    await c.getBenchmarks({ category: "saas", segment: undefined });
    await c.listKeys();
    await c.adminGetAccount("acc_1");
    await c.healthz();
    expect(seen.map((r) => [r.url.replace(server.url, ""), r.headers.get("authorization"), r.headers.get("user-agent")])).toEqual([
      ["/data/v1/benchmarks?category=saas", "Bearer svc_test_k", "my-app/1.0"],
      ["/api/v1/console/keys", "Bearer bds_sess_s", "my-app/1.0"],
      ["/api/v1/admin/accounts/acc_1", "Bearer adm", "my-app/1.0"],
      ["/healthz", null, "my-app/1.0"],
    ]);
  });
});

describe("@benchdata/client on other runtimes (the same checks)", () => {
  for (const [runtime, argv] of [
    ["bun", [RUN_CHECKS]],
    ["deno", ["run", "--allow-net", "--no-config", RUN_CHECKS]],
  ] as const) {
    it(`${runtime}: every check passes and every operation is called`, () => {
      const r = spawnSync(BIN(runtime), [...argv, server.url, ADMIN, runtime], { encoding: "utf8", timeout: 120_000, env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
      expect(r.status, `${runtime} exited ${r.status}: ${r.stderr}`).toBe(0);
      const report = JSON.parse(r.stdout.trim().split("\n").pop()!) as { called: string[] };
      expect(Object.keys(OPERATIONS).filter((id) => !report.called.includes(id as never)), "operations not called").toEqual([]);
    }, 150_000);
  }
});
