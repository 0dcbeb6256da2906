import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Benchdata, BenchdataError } from "@benchdata/client";
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

  it("the host's login decides console access; each user sees only their own account (through @benchdata/client)", async () => {
    // The client against the mounted prefix; the console credential is the host's own login cookie.
    const as = (cookie?: string, apiKey?: string): Benchdata =>
      new Benchdata({ baseUrl: `${app.url}/benchmarks-api`, ...(apiKey ? { apiKey } : {}), fetch: (r) => { if (cookie) r.headers.set("cookie", cookie); return fetch(r); } });
    const noLogin = await as().listKeys().catch((e: unknown) => e);
    expect(noLogin).toBeInstanceOf(BenchdataError);
    expect([(noLogin as BenchdataError).status, (noLogin as BenchdataError).code]).toEqual([401, "console.invalid_session"]);

    const alice = as(await login("alice"));
    const created = await alice.createKey({ name: "alice's key", environment: "test", scopes: ["benchmarks:read"] });
    expect(created.status).toBe(201);
    const key = created.data;

    const history = await as(undefined, key.raw_key).getHistory({ metric: "churn_rate", category: "saas", periods: 8 });
    expect(history.data.history).toHaveLength(8);
    expect(history.rateLimit?.remaining).toBe(history.rateLimit!.limit - 1);

    const bob = as(await login("bob"));
    const peek = await bob.getKey(key.key_id).catch((e: unknown) => e);
    expect((peek as BenchdataError).status).toBe(404);
    expect((await alice.getKey(key.key_id)).data.key_id).toBe(key.key_id);
  });
});
