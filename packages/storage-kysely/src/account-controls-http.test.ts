/**
 * What an operator does to an account, through the real HTTP API, with TWO app instances over one store (two
 * connections to one SQLite file or one PostgreSQL database; two apps over one memory store): the change
 * made on one instance holds on the other at its very next request, although that instance remembers the key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";

const ADMIN = "admin-token-for-account-controls-0123456789";
const SANDBOX = "http://sandbox.benchdata.test";

/** Each store kind opens two handles on one store. */
const stores = await twoHandleStores("account-controls-http");

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any; headers: Headers };
type App = ReturnType<typeof createApp>;

for (const [name, open] of Object.entries(stores)) {
  describe(`account controls across two instances: ${name}`, () => {
    let handles: [Storage, Storage];
    let a: App;
    let b: App;
    beforeAll(async () => {
      handles = await open();
      const config = defineConfig({ target: "host" });
      a = createApp({ storage: handles[0], config, adminToken: ADMIN });
      b = createApp({ storage: handles[1], config, adminToken: ADMIN });
    });
    afterAll(async () => {
      await handles[0].close();
      if (handles[1] !== handles[0]) await handles[1].close();
    });

    const call = async (app: App, method: string, path: string, auth: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res> => {
      const headers: Record<string, string> = { authorization: `Bearer ${auth}`, ...extra };
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await app.fetch(new Request(`${SANDBOX}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text), headers: r.headers };
    };
    const admin = (app: App, method: string, path: string, body?: unknown) => call(app, method, `/api/v1/admin${path}`, ADMIN, body);
    const account = async (tier: string, scopes: string[]): Promise<{ id: string; session: string; key: string; keyId: string }> => {
      const acc = await admin(a, "POST", "/accounts", { name: `Controls ${tier}`, tier });
      expect(acc.status, JSON.stringify(acc.body)).toBe(201);
      const k = await call(a, "POST", "/api/v1/console/keys", acc.body.session_token, { name: "k", environment: "test", scopes });
      expect(k.status, JSON.stringify(k.body)).toBe(201);
      return { id: acc.body.account_id, session: acc.body.session_token, key: k.body.raw_key, keyId: k.body.key_id };
    };
    const SNAPSHOTS = "/data/v1/merchant/vcfs"; // merchant:read (startup and above)
    const BENCH = "/data/v1/benchmarks?category=saas"; // benchmarks:read (every tier)

    it("tier downgrade: a scope the new tier does not permit stops working at once on the other instance, is gone from the key, and an upgrade restores nothing", async () => {
      const acc = await account("startup", ["benchmarks:read", "merchant:read"]);
      // Instance A knows the key (its lookup is remembered) and lets both scopes through.
      expect((await call(a, "GET", SNAPSHOTS, acc.key)).status).toBe(200);
      expect((await call(a, "GET", BENCH, acc.key)).status).toBe(200);

      const down = await admin(b, "PATCH", `/accounts/${acc.id}`, { tier: "developer" });
      expect(down.status).toBe(200);

      const refused = await call(a, "GET", SNAPSHOTS, acc.key);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("auth.insufficient_scope");
      expect(refused.body.detail).toContain("merchant:read");
      expect((await call(b, "GET", SNAPSHOTS, acc.key)).status).toBe(403);
      // What the tier still permits keeps working on both.
      expect((await call(a, "GET", BENCH, acc.key)).status).toBe(200);
      expect((await call(b, "GET", BENCH, acc.key)).status).toBe(200);
      // The key no longer carries the scope, in the console of either instance.
      const listed = await call(a, "GET", `/api/v1/console/keys/${acc.keyId}`, acc.session);
      expect(listed.body.scopes).toEqual(["benchmarks:read"]);

      // An upgrade restores nothing by itself.
      expect((await admin(a, "PATCH", `/accounts/${acc.id}`, { tier: "startup" })).status).toBe(200);
      expect((await call(b, "GET", SNAPSHOTS, acc.key)).body.code).toBe("auth.insufficient_scope");
      expect((await call(a, "GET", `/api/v1/console/keys/${acc.keyId}`, acc.session)).body.scopes).toEqual(["benchmarks:read"]);
    });

    it("tier downgrade: rotation never re-issues a scope the tier does not permit", async () => {
      const acc = await account("growth", ["benchmarks:read", "merchant:read", "merchant:write", "compare:read"]);
      expect((await admin(b, "PATCH", `/accounts/${acc.id}`, { tier: "startup" })).status).toBe(200);
      const rotated = await call(a, "POST", `/api/v1/console/keys/${acc.keyId}/rotate`, acc.session);
      expect(rotated.status).toBe(200);
      expect(rotated.body.scopes).toEqual(["benchmarks:read", "merchant:read"]);
      expect((await call(b, "GET", SNAPSHOTS, rotated.body.raw_key)).status).toBe(200);
      const write = await call(b, "POST", SNAPSHOTS, rotated.body.raw_key, { merchant_id: "m1", category: "saas", period: "2026-Q3", metrics: { gross_margin: 0.5 } });
      expect(write.status).toBe(403);
      expect(write.body.code).toBe("auth.insufficient_scope");
    });
  });
}
