// `X-Content-Type-Options: nosniff` on every response the app builds: successes, errors, 404s, 405s, 204s.
import { describe, expect, it } from "vitest";
import { kit, LIVE_HOST } from "./test-kit.ts";

describe("X-Content-Type-Options: nosniff", () => {
  it("is on every route's answer, with and without credentials, and on misses and preflights", async () => {
    const k = kit();
    const { session } = await k.account("enterprise");
    const { raw } = await k.key(session, "test", ["benchmarks:read"]);
    const seen: string[] = [];
    const check = (what: string, headers: Headers): void => {
      seen.push(what);
      expect(headers.get("x-content-type-options"), what).toBe("nosniff");
    };
    for (const route of k.app.routes) {
      const path = route.path.replace(/\{[^}]+\}/g, "x_unknown");
      const auth = route.path.startsWith("/data/") ? raw : route.path.startsWith("/api/v1/admin") ? "admin-token-for-tests-0123456789" : session;
      const init = (authorization: string | null): RequestInit => ({
        method: route.method,
        headers: { ...(authorization === null ? {} : { authorization: `Bearer ${authorization}` }), ...(route.method === "GET" ? {} : { "content-type": "application/json" }) },
        ...(route.method === "GET" || route.method === "DELETE" ? {} : { body: "{}" }),
      });
      check(`${route.method} ${route.path} (authorized)`, (await k.call(new Request(`${LIVE_HOST}${path}`, init(auth)))).headers);
      check(`${route.method} ${route.path} (no credentials)`, (await k.call(new Request(`${LIVE_HOST}${path}`, init(null)))).headers);
    }
    check("404", (await k.call(new Request(`${LIVE_HOST}/nope`))).headers);
    check("404 under /data/v1", (await k.data(raw, "/nope")).headers);
    check("405", (await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks`, { method: "DELETE" }))).headers);
    check("OPTIONS preflight", (await k.call(new Request(`${LIVE_HOST}/data/v1/benchmarks`, { method: "OPTIONS", headers: { origin: "https://x.test" } }))).headers);
    check("a 200 data answer", (await k.data(raw, "/benchmarks/categories")).headers);
    check("a 415", (await k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session}` }, body: "x" }))).headers);
    expect(seen.length).toBeGreaterThan(2 * k.app.routes.length);
  });
});
