// X-Request-Id on every answer of createApp (echoed when sane, else a generated ULID), exposed to browsers with
// CORS, carried in the log lines of its request; and the access log (off by default, no secrets).
import { decodeTime } from "ulid";
import { describe, expect, it } from "vitest";
import type { LogFields, Logger } from "../log/logger.ts";
import { kit, LIVE_HOST } from "./test-kit.ts";

const BENCH = "/benchmarks?category=saas";
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function capture(): { logger: Logger; lines: { level: string; msg: string; fields: LogFields }[] } {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  return { logger: { info: at("info"), warn: at("warn"), error: at("error") }, lines };
}

describe("X-Request-Id", () => {
  it("is on every route's answer, misses and preflights included, generated and distinct when none is sent", async () => {
    const k = kit();
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    const ids = new Set<string>();
    const check = (what: string, headers: Headers): void => {
      const id = headers.get("x-request-id");
      expect(id, what).toMatch(ULID);
      ids.add(id!);
    };
    for (const route of k.app.routes) {
      const path = route.path.replace(/\{[^}]+\}/g, "x_unknown");
      const auth = route.path.startsWith("/data/") ? raw : route.path.startsWith("/api/v1/admin") ? "admin-token-for-tests-0123456789" : session;
      const r = await k.call(new Request(`${LIVE_HOST}${path}`, { method: route.method, headers: { authorization: `Bearer ${auth}` } }));
      check(`${route.method} ${route.path}`, r.headers);
    }
    check("404", (await k.call(new Request(`${LIVE_HOST}/nope`))).headers);
    check("405", (await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks`, { method: "DELETE" }))).headers);
    check("preflight", (await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks`, { method: "OPTIONS", headers: { origin: "https://x.test" } }))).headers);
    check("/healthz", (await k.call(new Request(`${LIVE_HOST}/healthz`))).headers);
    check("/metrics", (await k.call(new Request(`${LIVE_HOST}/metrics`))).headers);
    check("console UI", (await k.call(new Request(`${LIVE_HOST}/console/`))).headers);
    expect(ids.size).toBe(k.app.routes.length + 6);
  });

  it("echoes a sane incoming id and ignores any other", async () => {
    const k = kit();
    const sent = async (id: string): Promise<string | null> => (await k.call(new Request(`${LIVE_HOST}/healthz`, { headers: { "x-request-id": id } }))).headers.get("x-request-id");
    for (const sane of ["a", "req-1234.abc_DEF:9", "0".repeat(128), "01JDX3Q8Z6M4V0R6S5ZP0TQK7W"]) expect(await sent(sane)).toBe(sane);
    for (const insane of ["", "0".repeat(129), "has space", "semi;colon", "quote\"", "slash/x", "ünï"]) {
      const got = await sent(insane);
      expect(got, JSON.stringify(insane)).toMatch(ULID);
      expect(got).not.toBe(insane);
    }
  });

  it("is readable by browser code: listed in Access-Control-Expose-Headers wherever CORS is answered", async () => {
    const k = kit();
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    const origin = { origin: "https://app.example" };
    const exposed = (h: Headers): string[] => (h.get("access-control-expose-headers") ?? "").split(",").map((s) => s.trim().toLowerCase());
    const ok = await k.data(raw, BENCH, { headers: origin });
    expect(ok.status).toBe(200);
    expect(exposed(ok.headers)).toEqual(expect.arrayContaining(["x-request-id", "x-ratelimit-limit", "retry-after"]));
    const missing = await k.data(null, BENCH, { headers: origin });
    expect(missing.status).toBe(401);
    expect(exposed(missing.headers)).toContain("x-request-id");
    const notFound = await k.data(raw, "/nope", { headers: origin });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("access-control-allow-origin")).toBe("*");
    expect(exposed(notFound.headers)).toEqual(["x-request-id"]);
    // /openapi.json answers CORS too.
    expect(exposed((await k.call(new Request(`${LIVE_HOST}/openapi.json`))).headers)).toEqual(["x-request-id"]);
    // No CORS answered: nothing exposed.
    expect((await k.data(raw, BENCH)).headers.get("access-control-expose-headers")).toBeNull();
  });

  it("is declared on every response of every operation in the OpenAPI document", () => {
    const doc = kit().app.openapi as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }> }>>;
      components: { responses: Record<string, { headers?: Record<string, unknown> }>; headers: Record<string, { schema: { pattern: string } }> };
    };
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        for (const [status, response] of Object.entries(op.responses)) {
          const resolved = response.$ref ? doc.components.responses[response.$ref.split("/").pop()!]! : response;
          expect(resolved.headers?.["X-Request-Id"], `${method} ${path} ${status}`).toEqual({ $ref: "#/components/headers/X-Request-Id" });
          checked++;
        }
    expect(checked).toBeGreaterThan(100);
    expect(doc.components.headers["X-Request-Id"]!.schema.pattern).toBe("^[A-Za-z0-9._:-]{1,128}$");
  });

  it("leaves the error body the contract's {detail, code, status}", async () => {
    const k = kit();
    const r = await k.data(null, BENCH, { headers: { "x-request-id": "corr-1" } });
    expect(r.status).toBe(401);
    expect(r.headers.get("x-request-id")).toBe("corr-1");
    expect(Object.keys(r.body).sort()).toEqual(["code", "detail", "status"]);
  });

  it("is carried in the log line of a request's unhandled error", async () => {
    const { logger, lines } = capture();
    const k = kit({ logger, webhooks: { sendTest: () => Promise.reject(new Error("sender exploded")) } });
    const { session } = await k.account("growth");
    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/console/webhooks/test`, { method: "POST", headers: { authorization: `Bearer ${session}`, "x-request-id": "trace-42" } }));
    expect(r.status).toBe(500);
    expect(r.headers.get("x-request-id")).toBe("trace-42");
    const line = lines.find((l) => l.msg === "unhandled error");
    expect(line?.fields).toMatchObject({ request_id: "trace-42", where: "POST /api/v1/console/webhooks/test" });
  });

  it("is carried in the storage fault's first log line when a request's admission failed", async () => {
    const { logger, lines } = capture();
    const k = kit({ logger });
    const { session } = await k.account("growth");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    (k.storage as { admit: unknown }).admit = () => Promise.reject(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
    const r = await k.data(raw, BENCH, { headers: { "x-request-id": "full-disk-1" } });
    expect(r.status).toBe(503);
    expect(r.headers.get("x-request-id")).toBe("full-disk-1");
    expect(lines.find((l) => l.msg === "storage unavailable: answering 503")?.fields).toMatchObject({ operation: "admit", cause: "SQLITE_FULL", request_id: "full-disk-1" });
  });
});

describe("access log", () => {
  it("is off by default", async () => {
    const { logger, lines } = capture();
    const k = kit({ logger });
    await k.call(new Request(`${LIVE_HOST}/healthz`));
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
  });

  it("writes one line per request with its id, method, route template, status and duration, and never a secret", async () => {
    const { logger, lines } = capture();
    const k = kit({ logger, config: { log: { access: true } } });
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "live", ["benchmarks:read"]);
    lines.length = 0;
    const r = await k.data(raw, "/benchmarks/distribution?category=saas&metric=secret-in-query&token=xyz", { headers: { "x-request-id": "acc-log-1" } });
    await k.console(session, "GET", "/keys");
    await k.call(new Request(`${LIVE_HOST}/nope?q=1`));
    await k.data("svc_live_" + "x".repeat(10), "/benchmarks");
    const access = lines.filter((l) => l.msg === "request");
    expect(access).toHaveLength(4);
    const [data, keys, miss, short] = access.map((l) => l.fields);
    expect(data).toMatchObject({ request_id: "acc-log-1", method: "GET", route: "/data/v1/benchmarks/distribution", status: r.status, key_prefix: raw.slice(0, 12) });
    expect(typeof data!.duration_ms).toBe("number");
    expect(keys).toMatchObject({ method: "GET", route: "/api/v1/console/keys", status: 200, key_prefix: undefined });
    expect(keys!.request_id).toMatch(ULID);
    expect(miss).toMatchObject({ route: "(unmatched)", status: 404 });
    expect(short).toMatchObject({ status: 401, key_prefix: undefined });
    const text = JSON.stringify(access);
    for (const secret of [raw, raw.slice(12), session, "secret-in-query", "xyz", "category="]) expect(text).not.toContain(secret);
  });
});

describe("X-Request-Id on the data path", () => {
  // The Node adapter answers a Response whose headers nobody touched without building the real one and its
  // body stream (about 20 µs a request on Node 20); stamping the id on afterwards touched them on every answer.
  it("is built into a data answer's headers: nothing reads or changes response.headers after the pipeline", async () => {
    const k = kit();
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    const Native = globalThis.Response;
    const touched: Response[] = [];
    class Watched extends Native {
      override get headers(): Headers {
        touched.push(this);
        return super.headers;
      }
    }
    globalThis.Response = Watched;
    let answers: Response[];
    try {
      answers = [];
      for (const [key, origin] of [[raw, undefined], [raw, "https://app.example"], ["svc_test_" + "x".repeat(32), undefined]] as const) {
        const headers: Record<string, string> = { authorization: `Bearer ${key}`, host: "sandbox.localhost" };
        if (origin) headers.origin = origin;
        answers.push(await k.app.fetch(new Request(`http://sandbox.localhost/data/v1${BENCH}`, { headers, method: "GET" })));
      }
      expect(touched.filter((r) => answers.includes(r))).toEqual([]);
    } finally {
      globalThis.Response = Native;
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 401]);
    for (const r of answers) expect(r.headers.get("x-request-id")).toMatch(ULID);
    expect(answers[1]!.headers.get("access-control-expose-headers")).toMatch(/X-Request-Id/);
  });
});

describe("generated ids", () => {
  it("are ULIDs of the app's clock (the ulid package decodes their time) whose 80 random bits differ each time", async () => {
    const k = kit();
    const seen = new Set<string>();
    for (const step of [0, 1, 0, 0, 86_400_000, 1]) {
      k.clock.advance(step);
      for (let i = 0; i < 50; i++) {
        const id = (await k.call(new Request(`${LIVE_HOST}/healthz`))).headers.get("x-request-id")!;
        expect(id).toMatch(ULID);
        expect(decodeTime(id)).toBe(k.clock.now());
        seen.add(id.slice(10));
      }
    }
    expect(seen.size).toBe(300);
    k.clock.advance(0.25); // a clock with fractions of a millisecond
    const id = (await k.call(new Request(`${LIVE_HOST}/healthz`))).headers.get("x-request-id")!;
    expect(id).toMatch(ULID);
    expect(decodeTime(id)).toBe(Math.floor(k.clock.now()));
  });
});

