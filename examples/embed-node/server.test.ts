import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start } from "./server.ts";

describe("example: benchdata embedded in an existing node:http server", () => {
  let app: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    app = await start(0);
  });
  afterAll(() => new Promise<void>((r) => app.server.close(() => r())));

  async function login(name: string): Promise<string> {
    const r = await fetch(`${app.url}/login/${name}`);
    expect(r.status).toBe(204);
    return r.headers.get("set-cookie")!.split(";")[0]!;
  }

  it("keeps the host's own routes and mounts benchdata under the prefix", async () => {
    expect(await (await fetch(`${app.url}/`)).text()).toContain("host app home");
    expect(await (await fetch(`${app.url}/benchmarks-api/healthz`)).json()).toEqual({ ok: true });
  });

  it("the host's login decides console access; each user sees only their own account", async () => {
    const noLogin = await fetch(`${app.url}/benchmarks-api/api/v1/console/keys`);
    expect(noLogin.status).toBe(401);
    expect(((await noLogin.json()) as { code: string }).code).toBe("console.invalid_session");

    const alice = await login("alice");
    const created = await fetch(`${app.url}/benchmarks-api/api/v1/console/keys`, {
      method: "POST",
      headers: { cookie: alice, "content-type": "application/json" },
      body: JSON.stringify({ name: "alice's key", environment: "test", scopes: ["benchmarks:read"] }),
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { key_id: string; raw_key: string };

    const data = await fetch(`${app.url}/benchmarks-api/data/v1/benchmarks/history?metric=churn_rate&category=saas&periods=8`, { headers: { authorization: `Bearer ${key.raw_key}` } });
    expect(data.status).toBe(200);
    const history = (await data.json()) as { history: { period: string }[] };
    expect(history.history).toHaveLength(8);

    const bob = await login("bob");
    const peek = await fetch(`${app.url}/benchmarks-api/api/v1/console/keys/${key.key_id}`, { headers: { cookie: bob } });
    expect(peek.status).toBe(404);
    const own = await fetch(`${app.url}/benchmarks-api/api/v1/console/keys/${key.key_id}`, { headers: { cookie: alice } });
    expect(own.status).toBe(200);
  });
});
