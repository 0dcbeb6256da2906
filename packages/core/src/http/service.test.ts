import { Validator } from "@seriousme/openapi-schema-validator";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import { createApp } from "./create-app.ts";
import type { Route } from "./route.ts";
import { baseRouter } from "./base-router.ts";
import { bearerToken, splitUrl } from "./request-url.ts";
import { queryValues } from "./query.ts";
import { interpretPercentile, interpretPercentileJson } from "./data/interpretation.ts";
import { clientAddressOf } from "./data/key-checks.ts";
import { CATEGORIES, METRICS } from "../data/catalog.ts";
import { kit, LIVE_HOST } from "./test-kit.ts";

describe("service routes", () => {
  it("GET /healthz → 200 {ok:true} without auth", async () => {
    const r = await kit().call(new Request(`${LIVE_HOST}/healthz`));
    expect([r.status, r.body]).toEqual([200, { ok: true }]);
  });

  it("unknown route → 404 not_found; wrong method → 405 method_not_allowed with Allow", async () => {
    const k = kit();
    const nf = await k.call(new Request(`${LIVE_HOST}/nope`));
    expect(nf.body).toEqual({ detail: expect.any(String), code: "not_found", status: 404 });
    const wrong = await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks`, { method: "DELETE" }));
    expect([wrong.status, wrong.body.code]).toEqual([405, "method_not_allowed"]);
    expect(wrong.headers.get("allow")).toBe("GET");
    const keys = await k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`, { method: "PUT" }));
    expect(keys.headers.get("allow")).toBe("POST, GET");
  });

  it("a trailing slash and a query string do not change the route", async () => {
    const r = await kit().call(new Request(`${LIVE_HOST}/healthz/?x=1`));
    expect(r.status).toBe(200);
  });

  it("every error body is exactly {detail, code, status}", async () => {
    const k = kit();
    for (const r of [await k.call(new Request(`${LIVE_HOST}/x`)), await k.data(null, "/benchmarks"), await k.console("x", "GET", "/keys")]) {
      expect(Object.keys(r.body)).toEqual(["detail", "code", "status"]);
      expect(r.body.status).toBe(r.status);
    }
  });
});

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    const app = createApp({ storage: createMemoryStorage() });
    const result = await new Validator().validate(app.openapi);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(app.openapi.openapi).toBe("3.1.0");
  });

  it("lists every route the app serves, with a unique operationId, security and the error shape", async () => {
    const app = createApp({ storage: createMemoryStorage(), adminToken: "t" });
    const doc = app.openapi as { paths: Record<string, Record<string, { operationId: string; security: unknown[]; responses: Record<string, unknown> }>>; components: { securitySchemes: object; schemas: { Error: { required: string[] } } } };
    const ops = new Set<string>();
    for (const r of app.routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      ops.add(op!.operationId);
    }
    expect(ops.size).toBe(app.routes.length);
    const expected = [
      "GET /data/v1/benchmarks", "GET /data/v1/benchmarks/percentile", "GET /data/v1/benchmarks/distribution", "GET /data/v1/benchmarks/history",
      "GET /data/v1/segments", "GET /data/v1/segments/breakdown", "GET /data/v1/merchant/vcfs", "POST /data/v1/merchant/vcfs", "GET /data/v1/merchant/compare",
      "GET /data/v1/merchant/insights", "GET /data/v1/merchant/score", "GET /data/v1/report", "GET /data/v1/export/xbrl",
      "POST /api/v1/console/keys", "GET /api/v1/console/keys", "GET /api/v1/console/keys/{key_id}", "POST /api/v1/console/keys/{key_id}/rotate", "POST /api/v1/console/keys/{key_id}/revoke",
      "GET /api/v1/console/usage/summary", "POST /api/v1/console/webhooks", "GET /api/v1/console/webhooks", "GET /api/v1/console/webhooks/{webhook_id}", "DELETE /api/v1/console/webhooks/{webhook_id}", "POST /api/v1/console/webhooks/{webhook_id}/enable", "POST /api/v1/console/webhooks/{webhook_id}/recover",
      "POST /api/v1/console/webhooks/{webhook_id}/rotate-secret",
      "GET /api/v1/console/webhooks/{webhook_id}/deliveries", "POST /api/v1/console/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", "POST /api/v1/console/webhooks/test",
      "GET /api/v1/console/invoices", "POST /api/v1/console/billing/retry",
      "POST /api/v1/admin/accounts", "GET /api/v1/admin/accounts/{account_id}", "PATCH /api/v1/admin/accounts/{account_id}", "POST /api/v1/admin/accounts/{account_id}", "POST /api/v1/admin/accounts/{account_id}/sessions",
      "POST /api/v1/admin/accounts/{account_id}/billing/release", "POST /api/v1/admin/accounts/{account_id}/suspend", "POST /api/v1/admin/accounts/{account_id}/resume",
      "DELETE /api/v1/admin/accounts/{account_id}/sessions", "POST /api/v1/admin/accounts/{account_id}/sign-in-links",
      "GET /api/v1/admin/accounts", "GET /api/v1/admin/accounts/{account_id}/export", "GET /api/v1/admin/accounts/{account_id}/usage/breakdown", "DELETE /api/v1/admin/accounts/{account_id}",
      "POST /api/v1/console/sign-in", "POST /api/v1/console/sign-out", "GET /api/v1/console/account", "GET /api/v1/console/environments", "GET /api/v1/console/usage/daily", "GET /api/v1/console/usage/breakdown",
      "GET /api/v1/admin/audit", "GET /api/v1/console/audit",
      "GET /healthz", "GET /readyz", "GET /openapi.json",
    ];
    const listed = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual([...expected].sort());
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["admin", "apiKey", "session"]);
    expect(doc.components.schemas.Error.required.sort()).toEqual(["code", "detail", "status"]);
    expect(doc.paths["/data/v1/benchmarks"]!.get!.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths["/data/v1/benchmarks"]!.get!.responses["429"]).toBeDefined();
    expect(doc.paths["/api/v1/console/keys"]!.post!.security).toEqual([{ session: [] }]);
  });

  it("query parameters come from the validating schemas: bounds, defaults, enums, required", () => {
    const doc = createApp({ storage: createMemoryStorage() }).openapi as { paths: Record<string, { get: { parameters: { name: string; required: boolean; schema: Record<string, unknown> }[] } }> };
    const params = doc.paths["/data/v1/benchmarks/distribution"]!.get.parameters;
    expect(params.find((p) => p.name === "buckets")).toMatchObject({ required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } });
    expect(params.find((p) => p.name === "category")).toMatchObject({ required: true, schema: { enum: expect.arrayContaining(["saas", "health_wellness"]) } });
    const history = doc.paths["/data/v1/benchmarks/history"]!.get.parameters;
    expect(history.find((p) => p.name === "periods")!.schema).toMatchObject({ minimum: 1, maximum: 20, default: 4 });
    expect(history.find((p) => p.name === "granularity")!.schema).toMatchObject({ enum: ["quarterly", "monthly"], default: "quarterly" });
  });

  it("success status and media type come from the endpoint; refusals after the key lookup document the X-RateLimit headers", () => {
    const doc = createApp({ storage: createMemoryStorage() }).openapi as { paths: Record<string, Record<string, { responses: Record<string, { content?: object; headers?: object }> }>> };
    // Every data endpoint answers 200 on success (the spec), the snapshot creation included.
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith("/data/v1/")) continue;
      for (const [method, op] of Object.entries(ops)) expect(Object.keys(op.responses).filter((s) => s.startsWith("2")), `${method} ${path}`).toEqual(["200"]);
    }
    expect(Object.keys(doc.paths["/data/v1/export/xbrl"]!.get!.responses["200"]!.content!)).toEqual(["application/xml"]);
    for (const status of ["401", "403"]) expect(Object.keys(doc.paths["/data/v1/benchmarks"]!.get!.responses[status]!.headers!)).toContain("X-RateLimit-Remaining");
  });

  it("GET /openapi.json serves the document", async () => {
    const r = await kit().call(new Request(`${LIVE_HOST}/openapi.json`));
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe("3.1.0");
    expect(Object.keys(r.body.paths)).toContain("/api/v1/admin/accounts");
  });
});

describe("router (itty-router) and URL helpers", () => {
  // A route answering with its own path and the params it was given; a miss answering with the Allow list.
  const echo = (method: string, path: string): Route =>
    ({ method, path, run: (_request: Request, params: Readonly<Record<string, string>>) => Promise.resolve(Response.json({ route: `${method} ${path}`, params })) }) as unknown as Route;
  const miss = (_request: Request, _path: string, allow: readonly string[]): Response => Response.json({ miss: true, allow });
  const route = async (router: ReturnType<typeof baseRouter>, method: string, path: string): Promise<unknown> =>
    (await router.fetch(new Request(`http://h${path}`, { method }), path, "", {})).json();

  it("static routes win over params, whatever the order given; params are decoded; wrong methods are collected", async () => {
    const router = baseRouter("/w", [echo("GET", "/w/{id}"), echo("DELETE", "/w/{id}"), echo("POST", "/w/test")], miss);
    expect(await route(router, "POST", "/w/test")).toEqual({ route: "POST /w/test", params: {} });
    expect(await route(router, "GET", "/w/test")).toEqual({ route: "GET /w/{id}", params: { id: "test" } });
    expect(await route(router, "GET", "/w/a%20b")).toEqual({ route: "GET /w/{id}", params: { id: "a b" } });
    expect(await route(router, "PUT", "/w/x")).toEqual({ miss: true, allow: ["GET", "DELETE"] });
    expect(await route(router, "PUT", "/w/test")).toEqual({ miss: true, allow: ["POST", "GET", "DELETE"] });
    expect(await route(router, "GET", "/w/%E0%A4%A")).toEqual({ miss: true, allow: [] });
    expect(await route(router, "GET", "/w/x/y")).toEqual({ miss: true, allow: [] });
    expect(await route(router, "GET", "/w")).toEqual({ miss: true, allow: [] });
  });

  it("exact paths skip itty but answer as itty would: methods as given, HEAD is not GET, a pattern registered first wins, a throw rejects", async () => {
    const router = baseRouter("/w", [echo("GET", "/w/x"), echo("PATCH", "/w/x"), echo("POST", "/w/x.json")], miss);
    expect(await route(router, "GET", "/w/x")).toEqual({ route: "GET /w/x", params: {} });
    expect(await route(router, "POST", "/w/x.json")).toEqual({ route: "POST /w/x.json", params: {} });
    expect(await route(router, "POST", "/w/xxjson")).toEqual({ miss: true, allow: [] });
    expect(await route(router, "HEAD", "/w/x")).toEqual({ miss: true, allow: ["GET", "PATCH"] });
    // Only the six standard methods are upper-cased by Request; itty compares the rest as given.
    expect(await route(router, "patch", "/w/x")).toEqual({ miss: true, allow: ["GET", "PATCH"] });
    expect(await route(router, "PATCH", "/w/x")).toEqual({ route: "PATCH /w/x", params: {} });
    // A static path with pattern syntax matches more than itself: it and every route after it go through itty.
    const wild = baseRouter("/w", [echo("GET", "/w/*"), echo("GET", "/w/y")], miss);
    expect(await route(wild, "GET", "/w/y")).toEqual({ route: "GET /w/*", params: {} });
    const throwing = baseRouter("/w", [{ ...echo("GET", "/w/t"), run: () => { throw new Error("sync"); } } as unknown as Route], miss);
    const answer = throwing.fetch(new Request("http://h/w/t"), "/w/t", "", {});
    await expect(answer).rejects.toThrow("sync");
  });

  it("one trailing slash is ignored by the app, two are not", async () => {
    const k = kit();
    expect((await k.call(new Request(`${LIVE_HOST}/healthz/`))).status).toBe(200);
    expect((await k.call(new Request(`${LIVE_HOST}/healthz//`))).body.code).toBe("not_found");
    expect((await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks//`))).body.code).toBe("not_found");
  });

  it("405 lists every method of a path, static and parameterised; admin paths are 404 when the admin API is off", async () => {
    const k = kit();
    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/console/webhooks/test`, { method: "PUT" }));
    expect([r.status, r.headers.get("allow")]).toEqual([405, "POST, GET, DELETE"]);
    const head = await k.call(new Request(`${LIVE_HOST}/healthz`, { method: "HEAD" }));
    expect([head.status, head.headers.get("allow")]).toEqual([405, "GET"]);
    const off = createApp({ storage: createMemoryStorage() });
    const admin = await off.fetch(new Request(`${LIVE_HOST}/api/v1/admin/accounts`, { method: "POST" }));
    expect([admin.status, (await admin.json()).detail]).toEqual([404, "The admin API is not enabled."]);
  });

  it("splitUrl and bearerToken", () => {
    expect(splitUrl("http://h:1/a/b/?q=1#f")).toEqual({ path: "/a/b", search: "q=1" });
    expect(splitUrl("https://h")).toEqual({ path: "/", search: "" });
    expect(splitUrl("http://h/?")).toEqual({ path: "/", search: "" });
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("Bearer")).toBeNull();
    expect(bearerToken("Token abc")).toBeNull();
  });
});

describe("query strings", () => {
  it("the first value of a name wins; + is a space; escapes are decoded; broken escapes are kept", () => {
    expect(queryValues("a=1&a=2&b=x+y&c=%2F&d&e=%E0%A4%A")).toEqual({ a: "1", b: "x y", c: "/", d: "", e: "%E0%A4%A" });
    expect(queryValues("")).toEqual({});
    expect(queryValues("&&x=1&")).toEqual({ x: "1" });
  });

  it("expected names (the schema's own strings) change nothing but speed, encoded or repeated", () => {
    const names = new Map(["metric", "value", "toString"].map((n) => [n, n]));
    const part = fc.constantFrom("metric", "m%65tric", "value", "va+lue", "toString", "__proto__", "x", "", "=", "%", "1", "a%20b");
    fc.assert(
      fc.property(fc.array(fc.tuple(part, fc.boolean(), part), { maxLength: 6 }), (pairs) => {
        const search = pairs.map(([name, eq, value]) => (eq ? `${name}=${value}` : name)).join("&");
        expect(queryValues(search, names)).toEqual(queryValues(search));
      }),
    );
  });
});

describe("interpretation", () => {
  it("higher-is-better metrics read the rank as is", () => {
    expect(interpretPercentile("gross_margin", 0.62, 95.2, "saas", "all", "2026-Q3")).toBe(
      "A gross margin of 62% is at percentile 95.2 of saas (all segments) in 2026-Q3. Higher is better for this metric, so it is better than about 95% of peers: in the top 10%.",
    );
    expect(interpretPercentile("customer_ltv", 1234.5, 30, "retail", "smb", "2026-Q1")).toMatch(/1234\.5 is at percentile 30\.0 of retail\/smb in 2026-Q1.*below the median/);
  });
  it("lower-is-better metrics invert it", () => {
    expect(interpretPercentile("burn_multiple", 3.1, 88, "fintech", "all", "2026-Q3")).toMatch(/3\.1x .*Lower is better.*about 12% of peers: in the bottom quartile/);
    expect(interpretPercentile("refund_rate", 0.02, 50, "retail", "all", "2026-Q3")).toMatch(/at the median/);
  });
  it("as JSON text, is exactly JSON.stringify of the sentence, whatever the segment and period hold", () => {
    const text = fc.oneof(
      fc.string({ unit: "binary" }),
      fc.array(fc.constantFrom("a", " ", '"', "\\", "\n", "\u0000", "\u001f", "\u2028", "\ud800", "\udc00", "é", "😀")).map((a) => a.join("")),
    );
    fc.assert(
      fc.property(fc.constantFrom(...METRICS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 1000 }), fc.constantFrom(...CATEGORIES), text, text, (metric, value, tenths, category, segment, period) => {
        const percentile = tenths / 10;
        return interpretPercentileJson(metric, value, percentile, category, segment, period) === JSON.stringify(interpretPercentile(metric, value, percentile, category, segment, period));
      }),
      { numRuns: 3_000 },
    );
  });
});

describe("client address", () => {
  const req = (xff?: string) => new Request("http://h/", xff === undefined ? {} : { headers: { "x-forwarded-for": xff } });
  it("uses the adapter's address unless trustProxy; then the rightmost X-Forwarded-For entry (the proxy's, not the client's), without a port", () => {
    expect(clientAddressOf(req("1.2.3.4"), { clientAddress: "10.0.0.1" }, false)).toBe("10.0.0.1");
    expect(clientAddressOf(req("10.0.0.1, 1.2.3.4:5678"), { clientAddress: "10.0.0.1" }, true)).toBe("1.2.3.4");
    expect(clientAddressOf(req("203.0.113.5,198.51.100.1 , 1.2.3.4"), {}, true)).toBe("1.2.3.4");
    // An empty last entry is no address from the proxy: the peer counts, never an entry the client wrote.
    expect(clientAddressOf(req("203.0.113.5, "), { clientAddress: "10.0.0.1" }, true)).toBe("10.0.0.1");
    expect(clientAddressOf(req("[2001:db8::1]:443"), {}, true)).toBe("[2001:db8::1]");
    expect(clientAddressOf(req("2001:db8::1"), {}, true)).toBe("2001:db8::1");
    expect(clientAddressOf(req(), { clientAddress: "::1" }, true)).toBe("::1");
    expect(clientAddressOf(req(), {}, false)).toBe("");
  });
});
