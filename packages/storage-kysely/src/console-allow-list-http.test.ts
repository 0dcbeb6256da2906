/**
 * An account's IP allow-list guards its console sessions as it guards its keys, through the real HTTP API, on
 * every store: a session from outside the ranges can neither read nor create keys or webhooks (403
 * `auth.ip_not_allowed`), `X-Forwarded-For` counts only with `trustProxy`, and the operator's override
 * (`console_ip_exempt`) lets the console in from anywhere while the keys stay restricted. Two app instances
 * over one store (one without and one with `trustProxy`): a change made on one holds on the other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "@benchdata/core";
import { defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { twoHandleStores } from "./test-support/two-handle-stores.ts";

const ADMIN = "admin-token-for-console-allow-list-0123456789";
const HOST = "http://api.benchdata.test";
const INSIDE = "203.0.113.7";
const OUTSIDE = "198.51.100.9";

/** Each store kind opens two handles on one store. */
const stores = await twoHandleStores("console-allow-list-http");

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Res = { status: number; body: any; headers: Headers };
type App = ReturnType<typeof createApp>;
/** Where a request comes from: the TCP peer the adapter saw, and any headers (X-Forwarded-For). */
type From = { address?: string; headers?: Record<string, string> };

for (const [name, open] of Object.entries(stores)) {
  describe(`console sessions obey the account's IP allow-list: ${name}`, () => {
    let handles: [Storage, Storage];
    let direct: App;
    let proxied: App;
    beforeAll(async () => {
      handles = await open();
      const webhooks = { allowHttp: false, allowPrivateNetworks: false };
      direct = createApp({ storage: handles[0], config: defineConfig({ trustProxy: false, webhooks }), adminToken: ADMIN });
      proxied = createApp({ storage: handles[1], config: defineConfig({ trustProxy: true, webhooks }), adminToken: ADMIN });
    });
    afterAll(async () => {
      await handles[0].close();
      if (handles[1] !== handles[0]) await handles[1].close();
    });

    const call = async (app: App, method: string, path: string, auth: string | null, from: From, body?: unknown): Promise<Res> => {
      const headers: Record<string, string> = { ...(auth === null ? {} : { authorization: `Bearer ${auth}` }), ...from.headers };
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await app.fetch(new Request(`${HOST}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }), from.address === undefined ? {} : { clientAddress: from.address });
      const text = await r.text();
      return { status: r.status, body: text === "" ? null : JSON.parse(text), headers: r.headers };
    };
    const admin = (method: string, path: string, body?: unknown) => call(direct, method, `/api/v1/admin${path}`, ADMIN, {}, body);
    const consoleCall = (app: App, method: string, path: string, session: string, from: From, body?: unknown) => call(app, method, `/api/v1/console${path}`, session, from, body);
    const restricted = async (cidrs: string[]): Promise<{ id: string; session: string }> => {
      const acc = await admin("POST", "/accounts", { name: "Restricted Co", tier: "enterprise" });
      expect(acc.status).toBe(201);
      const patched = await admin("PATCH", `/accounts/${acc.body.account_id}`, { allowed_cidrs: cidrs });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      return { id: acc.body.account_id, session: acc.body.session_token };
    };
    const LIVE_KEY = { name: "server", environment: "live", scopes: ["benchmarks:read"] };
    const WEBHOOK = { url: "https://hooks.example.com/benchdata", events: ["key.created"] };

    it("a session from outside the ranges can neither read nor create keys or webhooks (403 auth.ip_not_allowed); from inside it can", async () => {
      const acc = await restricted(["203.0.113.0/24"]);
      const out: From = { address: OUTSIDE };
      for (const [method, path, body] of [
        ["GET", "/keys", undefined],
        ["POST", "/keys", LIVE_KEY],
        ["GET", "/webhooks", undefined],
        ["POST", "/webhooks", WEBHOOK],
        ["GET", "/account", undefined],
        ["GET", "/usage/summary", undefined],
      ] as const) {
        const r = await consoleCall(direct, method, path, acc.session, out, body);
        expect([r.status, r.body.code], `${method} ${path}`).toEqual([403, "auth.ip_not_allowed"]);
        expect(r.body.detail).toContain("allowed IP ranges");
      }
      // Nothing was created: from inside, the account has no key and no webhook yet.
      const inside: From = { address: INSIDE };
      expect((await consoleCall(direct, "GET", "/keys", acc.session, inside)).body.data).toEqual([]);
      expect((await consoleCall(direct, "GET", "/webhooks", acc.session, inside)).body.data).toEqual([]);
      const key = await consoleCall(direct, "POST", "/keys", acc.session, inside, LIVE_KEY);
      expect(key.status, JSON.stringify(key.body)).toBe(201);
      const hook = await consoleCall(direct, "POST", "/webhooks", acc.session, inside, WEBHOOK);
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      // An IPv4-mapped IPv6 peer is the same address.
      expect((await consoleCall(direct, "GET", "/keys", acc.session, { address: `::ffff:${INSIDE}` })).status).toBe(200);
    });

    it("an unknown or ended session is 401 from anywhere; an unknown client address is outside", async () => {
      const acc = await restricted(["203.0.113.0/24"]);
      const unknown = await consoleCall(direct, "GET", "/keys", `bds_sess_${"A".repeat(48)}`, { address: OUTSIDE });
      expect([unknown.status, unknown.body.code]).toEqual([401, "console.invalid_session"]);
      const noAddress = await consoleCall(direct, "GET", "/keys", acc.session, {});
      expect([noAddress.status, noAddress.body.code]).toEqual([403, "auth.ip_not_allowed"]);
    });

    it("IPv6 ranges: inside allowed, outside refused", async () => {
      const acc = await restricted(["2001:db8:1234::/48"]);
      expect((await consoleCall(direct, "GET", "/keys", acc.session, { address: "2001:db8:1234:5::1" })).status).toBe(200);
      expect((await consoleCall(direct, "GET", "/keys", acc.session, { address: "2001:db8:1235::1" })).body.code).toBe("auth.ip_not_allowed");
    });

    it("X-Forwarded-For is ignored without trustProxy (a spoofed inside address is refused); with it, its rightmost entry (the proxy's) is the client", async () => {
      const acc = await restricted(["203.0.113.0/24"]);
      const spoofed = await consoleCall(direct, "POST", "/keys", acc.session, { address: OUTSIDE, headers: { "x-forwarded-for": INSIDE } }, LIVE_KEY);
      expect([spoofed.status, spoofed.body.code]).toEqual([403, "auth.ip_not_allowed"]);
      const spoofedHook = await consoleCall(direct, "POST", "/webhooks", acc.session, { address: OUTSIDE, headers: { "x-forwarded-for": `${INSIDE}, ${INSIDE}` } }, WEBHOOK);
      expect(spoofedHook.body.code).toBe("auth.ip_not_allowed");
      // Behind the operator's proxy (trustProxy): the proxy's own address does not matter, the client's does.
      expect((await consoleCall(proxied, "GET", "/keys", acc.session, { address: "10.0.0.1", headers: { "x-forwarded-for": `${OUTSIDE}, ${INSIDE}` } })).status).toBe(200);
      // An inside address the client wrote itself, left of what the proxy appended, does not pass.
      const outsideBehindProxy = await consoleCall(proxied, "GET", "/keys", acc.session, { address: "10.0.0.1", headers: { "x-forwarded-for": `${INSIDE}, ${OUTSIDE}` } });
      expect(outsideBehindProxy.body.code).toBe("auth.ip_not_allowed");
      // Without the header the peer address counts, on either instance.
      expect((await consoleCall(proxied, "GET", "/keys", acc.session, { address: INSIDE })).status).toBe(200);
    });

    it("sign-in from outside: 403, no cookie, the link is used up and its session ended; from inside it signs in", async () => {
      const acc = await restricted(["203.0.113.0/24"]);
      const link = async (): Promise<string> => {
        const l = await admin("POST", `/accounts/${acc.id}/sign-in-links`);
        expect(l.status).toBe(201);
        return String(l.body.sign_in_path).split("=")[1] as string;
      };
      const csrf = { "x-benchdata-console": "1" };
      const first = await link();
      const refused = await call(direct, "POST", "/api/v1/console/sign-in", null, { address: OUTSIDE, headers: csrf }, { token: first });
      expect([refused.status, refused.body.code]).toEqual([403, "auth.ip_not_allowed"]);
      expect(refused.headers.get("set-cookie")).toBeNull();
      expect((await call(direct, "POST", "/api/v1/console/sign-in", null, { address: INSIDE, headers: csrf }, { token: first })).body.code).toBe("console.invalid_sign_in");
      // The refused sign-in's session was ended: the account has only the session it was created with.
      const bySession = await call(direct, "POST", "/api/v1/console/sign-in", null, { address: OUTSIDE, headers: csrf }, { token: acc.session });
      expect(bySession.body.code).toBe("auth.ip_not_allowed");
      const ok = await call(direct, "POST", "/api/v1/console/sign-in", null, { address: INSIDE, headers: csrf }, { token: await link() });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.headers.get("set-cookie")).toMatch(/^__Host-bds_console=bds_sess_/);
      expect((await admin("DELETE", `/accounts/${acc.id}/sessions`)).body.revoked_sessions).toBe(2);
    });

    it("the operator's override: console_ip_exempt lets the console in from anywhere (on the other instance too) while keys stay restricted; false restores the check", async () => {
      const acc = await restricted(["203.0.113.0/24"]);
      const key = await consoleCall(direct, "POST", "/keys", acc.session, { address: INSIDE }, { name: "k", environment: "test", scopes: ["benchmarks:read"] });
      expect(key.status).toBe(201);
      const out: From = { address: OUTSIDE };
      expect((await consoleCall(proxied, "GET", "/keys", acc.session, out)).status).toBe(403);

      const exempt = await admin("PATCH", `/accounts/${acc.id}`, { console_ip_exempt: true });
      expect(exempt.status).toBe(200);
      expect(exempt.body).toMatchObject({ allowed_cidrs: ["203.0.113.0/24"], console_ip_exempt: true });
      expect((await admin("GET", `/accounts/${acc.id}`)).body.console_ip_exempt).toBe(true);
      expect((await consoleCall(proxied, "GET", "/keys", acc.session, out)).status).toBe(200);
      expect((await consoleCall(direct, "POST", "/webhooks", acc.session, out, WEBHOOK)).status).toBe(201);
      // The allow-list still guards the data API.
      const data = await call(direct, "GET", "/data/v1/benchmarks?category=saas", key.body.raw_key, { address: OUTSIDE, headers: { host: "sandbox.benchdata.test" } });
      expect([data.status, data.body.code]).toEqual([403, "auth.ip_not_allowed"]);
      // Another change keeps the exemption; false ends it.
      expect((await admin("PATCH", `/accounts/${acc.id}`, { allowed_cidrs: ["203.0.113.0/24", "192.0.2.0/24"] })).body.console_ip_exempt).toBe(true);
      expect((await admin("PATCH", `/accounts/${acc.id}`, { console_ip_exempt: false })).body.console_ip_exempt).toBe(false);
      expect((await consoleCall(proxied, "GET", "/keys", acc.session, out)).body.code).toBe("auth.ip_not_allowed");
      const bad = await admin("PATCH", `/accounts/${acc.id}`, { console_ip_exempt: "yes" });
      expect([bad.status, bad.body.code]).toEqual([422, "validation.invalid_body"]);
      expect(bad.body.detail).toContain("console_ip_exempt");
    });

    it("an account without ranges: its console works from any address, or none", async () => {
      const acc = await admin("POST", "/accounts", { name: "Open Co", tier: "growth" });
      expect(acc.body).not.toHaveProperty("console_ip_exempt");
      expect((await admin("GET", `/accounts/${acc.body.account_id}`)).body).toMatchObject({ allowed_cidrs: [], console_ip_exempt: false });
      expect((await consoleCall(direct, "GET", "/keys", acc.body.session_token, { address: OUTSIDE })).status).toBe(200);
      expect((await consoleCall(direct, "GET", "/keys", acc.body.session_token, {})).status).toBe(200);
    });
  });
}
