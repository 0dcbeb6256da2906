import { describe, expect, it } from "vitest";
import type { Kit } from "../test-kit.ts";
import { kit, spread } from "../test-kit.ts";

const BENCH = "/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas";
type Access = { base_url: string; host_header: string | null };

async function environments(k: Kit, session: string, origin: string, headers: Record<string, string> = {}): Promise<{ target: string; live: Access | null; test: Access | null }> {
  const r = await k.call(new Request(`${origin}/api/v1/console/environments`, { headers: { authorization: `Bearer ${session}`, ...headers } }));
  expect(r.status).toBe(200);
  return r.body;
}

/** A data request with `key`, sent where `access` says (its origin, and its Host header when it gives one). */
function use(k: Kit, key: string, access: Access): ReturnType<Kit["data"]> {
  return k.data(key, BENCH, { host: access.base_url, headers: access.host_header === null ? {} : { host: access.host_header } });
}

/** An account with a live and a test key, and live data for BENCH (so both answer 200 where they are accepted). */
async function setUp(config: NonNullable<Parameters<typeof kit>[0]>["config"] = {}): Promise<{ k: Kit; session: string; live: string; test: string }> {
  const k = kit({ config });
  await k.publish("saas", "all", "2026-Q3", "gross_margin", spread(40, 0.2, 0.8));
  const { session } = await k.account();
  return { k, session, live: (await k.key(session, "live")).raw, test: (await k.key(session, "test")).raw };
}

describe("GET /api/v1/console/environments (issue 29: the quick start printed a command that answered 403)", () => {
  it("target host: from each address the console is reached at, a test key answers 200 where test is said to be, a live key where live is, and neither on the other", async () => {
    const { k, session, live, test } = await setUp();
    const cases: [string, Access, Access][] = [
      ["http://127.0.0.1:8787", { base_url: "http://127.0.0.1:8787", host_header: null }, { base_url: "http://sandbox.localhost:8787", host_header: null }],
      ["http://localhost:8787", { base_url: "http://localhost:8787", host_header: null }, { base_url: "http://sandbox.localhost:8787", host_header: null }],
      ["http://[::1]:8787", { base_url: "http://[::1]:8787", host_header: null }, { base_url: "http://sandbox.localhost:8787", host_header: null }],
      ["https://api.example.com", { base_url: "https://api.example.com", host_header: null }, { base_url: "https://sandbox.api.example.com", host_header: null }],
      ["http://10.1.2.3:8787", { base_url: "http://10.1.2.3:8787", host_header: null }, { base_url: "http://10.1.2.3:8787", host_header: "sandbox.localhost:8787" }],
      ["http://sandbox.example.com", { base_url: "http://example.com", host_header: null }, { base_url: "http://sandbox.example.com", host_header: null }],
      ["http://test.localhost:8080", { base_url: "http://localhost:8080", host_header: null }, { base_url: "http://test.localhost:8080", host_header: null }],
    ];
    for (const [origin, liveAccess, testAccess] of cases) {
      expect(await environments(k, session, origin), origin).toEqual({ target: "host", live: liveAccess, test: testAccess });
      expect((await use(k, test, testAccess)).status, `${origin}: test key`).toBe(200);
      expect((await use(k, live, liveAccess)).status, `${origin}: live key`).toBe(200);
      expect((await use(k, test, liveAccess)).body.code).toBe("auth.environment_mismatch");
      expect((await use(k, live, testAccess)).body.code).toBe("auth.environment_mismatch");
    }
  });

  it("the Host header decides, as it does for the target: a console reached through a Host header is answered for that host", async () => {
    const { k, session } = await setUp();
    const e = await environments(k, session, "http://127.0.0.1:8787", { host: "api.example.com:8443" });
    expect(e.test).toEqual({ base_url: "http://sandbox.api.example.com:8443", host_header: null });
  });

  it("target test or live: that environment at the console's own address, the other null (its keys are refused everywhere)", async () => {
    for (const target of ["test", "live"] as const) {
      const { k, session, live, test } = await setUp({ target });
      const e = await environments(k, session, "http://127.0.0.1:8787");
      const here = { base_url: "http://127.0.0.1:8787", host_header: null };
      expect(e).toEqual(target === "test" ? { target, live: null, test: here } : { target, live: here, test: null });
      expect((await use(k, target === "test" ? test : live, here)).status).toBe(200);
    }
  });

  it("with trustProxy the proxy's X-Forwarded-Host and X-Forwarded-Proto (the last entries) give the address; without it they are ignored", async () => {
    const forwarded = { "x-forwarded-host": "evil.example, api.example.com", "x-forwarded-proto": "http, https" };
    const trusted = await setUp({ trustProxy: true });
    expect(await environments(trusted.k, trusted.session, "http://10.0.0.7:8787", forwarded)).toEqual({
      target: "host",
      live: { base_url: "https://api.example.com", host_header: null },
      test: { base_url: "https://sandbox.api.example.com", host_header: null },
    });
    const plain = await setUp();
    expect((await environments(plain.k, plain.session, "http://127.0.0.1:8787", forwarded)).live).toEqual({ base_url: "http://127.0.0.1:8787", host_header: null });
  });

  it("needs a session", async () => {
    const k = kit();
    expect((await k.call(new Request("http://127.0.0.1:8787/api/v1/console/environments"))).body.code).toBe("console.invalid_session");
  });
});
