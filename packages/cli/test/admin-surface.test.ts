// The admin surface of a real `benchdata serve` (issue 20, item 4): failed admin authentication is throttled per
// client address without ever refusing the correct token; a warning at start when the admin API listens on a
// non-loopback address; `--admin-port` moves the admin API to a loopback listener of its own.
import { afterAll, describe, expect, it } from "vitest";
import { isLoopbackHost } from "../src/commands/serve.ts";
import { ADMIN, logLines } from "./fault-fixture.ts";
import type { Instance } from "./helpers.ts";
import { cli, http, startServe } from "./helpers.ts";

const WRONG = "not-the-admin-token-0123456789abcdef";
const account = (base: string, token: string, headers: Record<string, string> = {}) =>
  http(`${base}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${token}`, ...headers }, body: { name: "Acme", tier: "growth" } });
const WARNING = "the admin API is reachable on a non-loopback address";
/** The operations an OpenAPI document lists, as `METHOD /path`. */
const operations = (doc: { paths: Record<string, Record<string, unknown>> }): string[] =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)).sort();

describe("admin surface (benchdata serve)", () => {
  const nodes: Instance[] = [];
  const start = async (args: string[], env: Record<string, string>): Promise<Instance> => {
    const node = await startServe(["--db", "memory:", ...args], env);
    nodes.push(node);
    return node;
  };
  afterAll(async () => {
    for (const n of nodes) await n.stop();
  });

  it("10 wrong admin tokens from one address: the next wrong one is 429 auth.too_many_failures with Retry-After and one log line; the correct token is still 201", async () => {
    const node = await start([], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    for (let i = 0; i < 10; i++) {
      // A spoofed X-Forwarded-For (trustProxy is off) changes nothing: the TCP peer is the client.
      const r = await account(node.url, WRONG, { "x-forwarded-for": `192.0.2.${i}` });
      expect([r.status, r.json?.code], `attempt ${i + 1}`).toEqual([401, "admin.invalid_token"]);
    }
    const refused = await account(node.url, WRONG, { "x-forwarded-for": "192.0.2.99" });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ detail: expect.stringContaining("correct token"), code: "auth.too_many_failures", status: 429 });
    const wait = Number(refused.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await http(`${node.url}/api/v1/admin/accounts/acc_01JZZZZZZZZZZZZZZZZZZZZZZZ`)).status).toBe(429); // no token at all

    const admitted = await account(node.url, ADMIN);
    expect(admitted.status, admitted.text).toBe(201);
    // One listener: its /openapi.json lists everything it serves, the admin API included.
    const ops = operations((await http(`${node.url}/openapi.json`)).json);
    expect(ops).toEqual(expect.arrayContaining(["POST /api/v1/admin/accounts", "GET /data/v1/benchmarks", "GET /api/v1/console/keys", "GET /openapi.json"]));
    // The data API is not affected by the admin throttle.
    expect((await http(`${node.url}/healthz`)).status).toBe(200);

    const lines = logLines(node).filter((l) => l.msg.startsWith("admin authentication throttled"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", client_address: "127.0.0.1", failures: 10 });
    const all = node.logs.join("\n");
    expect(all).not.toContain(WRONG);
    expect(all).not.toContain(ADMIN);
  });

  it("warns at start when the admin API listens on a non-loopback address, and only then", async () => {
    const exposed = await start(["--host", "0.0.0.0"], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    const warning = logLines(exposed).filter((l) => l.msg === WARNING);
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatchObject({ level: "warn", admin_host: "0.0.0.0", admin_port: exposed.port, advice: expect.stringContaining("--host 127.0.0.1") });
    expect(exposed.logs.join("\n")).not.toContain(ADMIN);

    const loopback = await start([], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    expect(logLines(loopback).filter((l) => l.msg === WARNING)).toEqual([]);
    const noAdmin = await start(["--host", "0.0.0.0"], { BENCHDATA_ADMIN_TOKEN: "" });
    expect(logLines(noAdmin).filter((l) => l.msg === WARNING)).toEqual([]);

    expect(["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "::ffff:10.0.0.1", "example.com", ""].some(isLoopbackHost)).toBe(false);
  });

  it("--admin-port: the admin API only on its own listener (127.0.0.1 by default), 404 on the main one, each listener's /openapi.json listing what it serves; no warning even with --host 0.0.0.0", async () => {
    const node = await start(["--host", "0.0.0.0", "--admin-port", "0"], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    const listening = logLines(node).find((l) => l.msg === "listening")!;
    const adminPort = listening.admin_port as number;
    expect(adminPort).toBeGreaterThan(0);
    expect(adminPort).not.toBe(node.port);
    expect(listening.admin_url).toBe(`http://127.0.0.1:${adminPort}`);
    expect(logLines(node).filter((l) => l.msg === WARNING)).toEqual([]);
    const adminBase = `http://127.0.0.1:${adminPort}`;

    const onMain = await account(node.url, ADMIN);
    expect([onMain.status, onMain.json?.code]).toEqual([404, "not_found"]);
    expect(onMain.json.detail).toContain("own listener");
    const created = await account(adminBase, ADMIN);
    expect(created.status, created.text).toBe(201);
    // The main listener still serves the console and data APIs.
    expect((await http(`${node.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${created.json.session_token}` } })).status).toBe(200);
    // The admin listener serves nothing else but its own description.
    for (const path of ["/healthz", "/api/v1/console/keys", "/data/v1/benchmarks?category=saas"]) {
      const r = await http(`${adminBase}${path}`, { headers: { authorization: `Bearer ${created.json.session_token}` } });
      expect([r.status, r.json?.code], path).toEqual([404, "not_found"]);
    }
    // Each listener's /openapi.json lists what it serves: the main one no admin operation (they answer 404
    // there), the admin listener's the admin operations and itself.
    const mainOps = operations((await http(`${node.url}/openapi.json`)).json);
    expect(mainOps.filter((op) => op.includes(" /api/v1/admin/"))).toEqual([]);
    expect(mainOps).toEqual(expect.arrayContaining(["GET /data/v1/benchmarks", "GET /api/v1/console/keys", "GET /healthz", "GET /openapi.json"]));
    const adminDoc = await http(`${adminBase}/openapi.json`);
    expect(adminDoc.status).toBe(200);
    const adminOps = operations(adminDoc.json);
    expect(adminOps.filter((op) => !op.includes(" /api/v1/admin/"))).toEqual(["GET /openapi.json"]);
    expect(adminOps).toEqual(expect.arrayContaining(["POST /api/v1/admin/accounts", "PATCH /api/v1/admin/accounts/{account_id}"]));
    // The throttle works there too.
    for (let i = 0; i < 10; i++) expect((await account(adminBase, WRONG)).status).toBe(401);
    expect((await account(adminBase, WRONG)).status).toBe(429);
    expect((await account(adminBase, ADMIN)).status).toBe(201);

    // A non-loopback admin host is warned about.
    const exposed = await start(["--admin-port", "0", "--admin-host", "0.0.0.0"], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    expect(logLines(exposed).filter((l) => l.msg === WARNING)).toHaveLength(1);
  });

  it("--admin-port without an admin token, or --admin-host without --admin-port, is a usage error (exit 2)", () => {
    const noToken = cli(["serve", "--db", "memory:", "--port", "0", "--admin-port", "0"], { BENCHDATA_ADMIN_TOKEN: "" });
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toContain("BENCHDATA_ADMIN_TOKEN");
    const hostOnly = cli(["serve", "--db", "memory:", "--port", "0", "--admin-host", "127.0.0.1"], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    expect(hostOnly.status).toBe(2);
    expect(hostOnly.stderr).toContain("--admin-port");
    const same = cli(["serve", "--db", "memory:", "--port", "18787", "--admin-port", "18787"], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    expect(same.status).toBe(2);
  });
});
