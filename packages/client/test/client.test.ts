// @benchdata/client against a real `benchdata serve` (the built CLI, SQLite): every operation once, the error codes,
// 429 with retry on and off, and the same checks again on the real Bun and Deno runtimes.
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "../../cli/test/helpers.ts";
import type { Instance } from "../../cli/test/helpers.ts";
import { Benchdata, BenchdataError, OPERATIONS, verifyWebhook } from "../src/index.ts";
import { runChecks } from "./checks.ts";

const ADMIN = "client-test-admin-token-0123456789abcdef";
const BIN_CLI = fileURLToPath(new URL("../../cli/bin/benchdata.js", import.meta.url));
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
    // A server that sends its headers and then stalls the body: the time-out covers reading it too.
    const stall = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
    });
    await new Promise<void>((resolve) => stall.listen(0, "127.0.0.1", resolve));
    try {
      const stalled = new Benchdata({ baseUrl: `http://127.0.0.1:${(stall.address() as AddressInfo).port}`, timeoutMs: 200 });
      expect(((await stalled.healthz().catch((e: unknown) => e)) as BenchdataError).code).toBe("client.timeout");
    } finally {
      stall.closeAllConnections();
      await new Promise((resolve) => stall.close(resolve));
    }
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
    await c.getBenchmarks({ category: "saas" }, { headers: { Authorization: "Bearer svc_test_other" } });
    expect(seen.map((r) => [r.url.replace(server.url, ""), r.headers.get("authorization"), r.headers.get("user-agent")])).toEqual([
      ["/data/v1/benchmarks?category=saas", "Bearer svc_test_k", "my-app/1.0"],
      ["/api/v1/console/keys", "Bearer bds_sess_s", "my-app/1.0"],
      ["/api/v1/admin/accounts/acc_1", "Bearer adm", "my-app/1.0"],
      ["/healthz", null, "my-app/1.0"],
      ["/data/v1/benchmarks?category=saas", "Bearer svc_test_other", "my-app/1.0"],
    ]);
  });
});

describe("@benchdata/client: real deliveries and quota", () => {
  it("verifyWebhook accepts the deliveries a local receiver gets from benchdata serve (both schemes) and refuses them altered", async () => {
    const received: { body: Buffer; headers: IncomingHttpHeaders }[] = [];
    let arrived: () => void = () => {};
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks), headers: req.headers });
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
        arrived();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const admin = new Benchdata({ baseUrl: server.url, adminToken: ADMIN });
      const acc = await admin.adminCreateAccount({ name: "deliveries", tier: "developer" });
      const console = new Benchdata({ baseUrl: server.url, sessionToken: acc.data.session_token });
      const hook = await console.createWebhook({ url, events: ["key.created"] });
      const key = await console.createKey({ name: "delivered", environment: "test", scopes: ["benchmarks:read"] });
      await delivered;
      const { body, headers } = received[0]!;
      const secret = hook.data.signing_secret;
      const both = await verifyWebhook(new Uint8Array(body), headers, secret);
      expect(both.ok && both.scheme).toBe("standard-webhooks");
      if (!both.ok || both.event.type !== "key.created") throw new Error(`not a key.created event: ${JSON.stringify(both)}`);
      expect(both.event.data.key_id).toBe(key.data.key_id);
      expect(both.event.account_id).toBe(acc.data.account_id);
      const xOnly = await verifyWebhook(body.toString("utf8"), { "x-service-signature": headers["x-service-signature"] }, secret);
      expect(xOnly.ok && xOnly.scheme).toBe("x-service-signature");
      const altered = Buffer.from(body.toString("utf8").replace("delivered", "Delivered"));
      expect(await verifyWebhook(altered, headers, secret)).toEqual({ ok: false, reason: "invalid_signature" });
      expect(await verifyWebhook(body, headers, secret.slice(0, -2) + "AA")).toEqual({ ok: false, reason: "invalid_signature" });
      expect(await verifyWebhook(body, headers, secret, { now: () => Date.now() + 3_600_000 })).toEqual({ ok: false, reason: "stale_timestamp" });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 60_000);

  it("live data imported with benchdata import: a typed answer, 404 data.insufficient_sample, then 402 quota.exhausted never retried (retry on)", async () => {
    // 40 businesses report gross_margin (over the publication minimum of 30), 5 report churn_rate (under it).
    const rows = ["business_id,category,segment,period,metric,value"];
    for (let i = 0; i < 40; i++) rows.push(`b${i},saas,smb,2026-Q3,gross_margin,${(0.5 + i / 100).toFixed(2)}`);
    for (let i = 0; i < 5; i++) rows.push(`b${i},saas,smb,2026-Q3,churn_rate,0.0${i + 1}`);
    const csv = join(dir, "live.csv");
    writeFileSync(csv, rows.join("\n") + "\n");
    const db = `sqlite:${join(dir, "live.db")}`;
    const imported = spawnSync(process.execPath, [BIN_CLI, "import", csv, "--db", db], { encoding: "utf8", timeout: 60_000 });
    expect(imported.status, imported.stderr).toBe(0);
    // A live deployment (live keys count toward quota).
    const live = await startServe(["--db", db], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    try {
      const admin = new Benchdata({ baseUrl: live.url, adminToken: ADMIN });
      const acc = await admin.adminCreateAccount({ name: "quota", tier: "enterprise" });
      await admin.adminUpdateAccount(acc.data.account_id, { limits: { monthly_quota: 3 } });
      const key = await new Benchdata({ baseUrl: live.url, sessionToken: acc.data.session_token }).createKey({ name: "live", environment: "live", scopes: ["benchmarks:read"] });
      let attempts = 0;
      const bd = new Benchdata({ baseUrl: live.url, apiKey: key.data.raw_key, retry: { maxRetries: 3, baseDelayMs: 1 }, fetch: (r) => (attempts++, fetch(r)) });
      const bench = await bd.getBenchmarks({ category: "saas" });
      expect([bench.data.period, bench.data.sample_size, Object.keys(bench.data.metrics)]).toEqual(["2026-Q3", 40, ["gross_margin"]]);
      const thin = (await bd.getPercentileRank({ category: "saas", metric: "churn_rate", value: 0.02 }).catch((e: unknown) => e)) as BenchdataError;
      expect([thin.status, thin.code]).toEqual([404, "data.insufficient_sample"]);
      let err: BenchdataError | null = null;
      for (let i = 0; i < 5 && err === null; i++) {
        attempts = 0;
        err = await bd.getBenchmarks({ category: "saas" }).then(
          () => null,
          (e: unknown) => e as BenchdataError,
        );
      }
      expect(err).toBeInstanceOf(BenchdataError);
      expect([err!.status, err!.code, attempts]).toEqual([402, "quota.exhausted", 1]);
      expect(err!.detail.length).toBeGreaterThan(0);
      expect(err!.rateLimit).not.toBeNull();
    } finally {
      await live.stop();
    }
  }, 90_000);
});

describe("@benchdata/client as an installed package (its exports map and built dist)", () => {
  const REPO = fileURLToPath(new URL("../../..", import.meta.url));
  const program = (url: string): string =>
    `import { Benchdata, BenchdataError } from "@benchdata/client"; const bd = new Benchdata({ baseUrl: ${JSON.stringify(url)} }); ` +
    `const h = await bd.healthz(); const e = await bd.getBenchmarks({ category: "saas" }).catch((x) => x); ` +
    `console.log(JSON.stringify([h.data, e instanceof BenchdataError, e.code]));`;
  for (const [runtime, argv] of [
    ["node", (code: string) => [process.execPath, ["--input-type=module", "-e", code]]],
    ["bun", (code: string) => [BIN("bun"), ["-e", code]]],
  ] as const) {
    it(`${runtime} resolves "@benchdata/client" from the workspace and calls the server`, () => {
      expect(existsSync(`${REPO}node_modules/@benchdata/client`), "node_modules/@benchdata/client is missing: run npm install (a new workspace)").toBe(true);
      const [cmd, args] = argv(program(server.url)) as [string, string[]];
      const r = spawnSync(cmd, args, { cwd: REPO, encoding: "utf8", timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toEqual([{ ok: true }, true, "auth.missing_key"]);
    }, 90_000);
  }
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
