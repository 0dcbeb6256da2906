import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import { createApp } from "./create-app.ts";
import { ADMIN_TOKEN, kit, LIVE_HOST, T0 } from "./test-kit.ts";

const adminRequest = (token: string | null, method = "POST", path = "/accounts", body: unknown = { name: "Acme", tier: "growth" }) =>
  new Request(`${LIVE_HOST}/api/v1/admin${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("admin API", () => {
  it("is off (404 not_found) when no admin token is configured", async () => {
    const app = createApp({ storage: createMemoryStorage() });
    const r = await app.fetch(adminRequest("anything"));
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe("not_found");
  });

  it("a missing or wrong admin token → 401 admin.invalid_token", async () => {
    const k = kit();
    for (const token of [null, "wrong", ADMIN_TOKEN + "x", ADMIN_TOKEN.slice(0, -1)]) {
      const r = await k.call(adminRequest(token));
      expect([r.status, r.body.code], String(token)).toEqual([401, "admin.invalid_token"]);
    }
  });

  it("POST /accounts → 201 {account_id, tier, session_token}; the token works in the console", async () => {
    const k = kit();
    const r = await k.admin("POST", "/accounts", { name: "Acme", tier: "startup" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "Acme", tier: "startup", created_at: new Date(T0).toISOString(), session_expires_at: new Date(T0 + 30 * 86_400_000).toISOString() });
    expect(r.body.account_id).toMatch(/^acc_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.body.session_token).toMatch(/^bds_sess_[A-Za-z0-9_-]{48}$/);
    expect((await k.console(r.body.session_token, "GET", "/keys")).status).toBe(200);
  });

  it("bad tier or body → 422 validation.invalid_body; wrong media type → 415", async () => {
    const k = kit();
    expect((await k.admin("POST", "/accounts", { name: "Acme", tier: "platinum" })).body).toMatchObject({ code: "validation.invalid_body", detail: expect.stringContaining("tier") });
    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "text/plain" }, body: "{}" }));
    expect(r.status).toBe(415);
  });

  it("PATCH /accounts/{id} sets tier, limit overrides, IP ranges and billing refs; POST is an alias", async () => {
    const k = kit();
    const { accountId } = await k.account("growth");
    const r = await k.admin("PATCH", `/accounts/${accountId}`, {
      tier: "enterprise",
      limits: { per_minute: 5000, monthly_quota: 123 },
      allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"],
      billing: { customer_ref: "cus_1", payment_method_ref: "pm_1" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      account_id: accountId,
      tier: "enterprise",
      limits: { per_minute: 5000, per_day: 2_000_000, monthly_quota: 123 },
      limit_overrides: { per_minute: 5000, monthly_quota: 123 },
      allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"],
      billing: { customer_ref: "cus_1", payment_method_ref: "pm_1" },
    });
    const cleared = await k.admin("POST", `/accounts/${accountId}`, { limits: { per_minute: null }, billing: { payment_method_ref: null } });
    expect(cleared.body.limit_overrides).toEqual({ monthly_quota: 123 });
    expect(cleared.body.billing).toEqual({ customer_ref: "cus_1", payment_method_ref: null });
    expect((await k.admin("GET", `/accounts/${accountId}`)).body.tier).toBe("enterprise");
  });

  it("limit overrides take effect on the next data request", async () => {
    const k = kit();
    const { accountId, session } = await k.account("enterprise");
    const key = await k.key(session);
    expect((await k.data(key.raw, "/benchmarks?category=saas")).headers.get("x-ratelimit-limit")).toBe("1000");
    await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_minute: 7 } });
    expect((await k.data(key.raw, "/benchmarks?category=saas")).headers.get("x-ratelimit-limit")).toBe("7");
  });

  it("invalid CIDR, unknown field, negative limit → 422 naming the field; unknown account → 404", async () => {
    const k = kit();
    const { accountId } = await k.account();
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { allowed_cidrs: ["10.0.0.0/8", "10.0.0.0/33"] })).body).toMatchObject({ code: "validation.invalid_body", detail: expect.stringContaining("allowed_cidrs[1]") });
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { allowed_cidr: [] })).body.detail).toContain("allowed_cidr");
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_minute: 0 } })).body.detail).toContain("limits.per_minute");
    // Limits the stores can hold: a 32-bit day counter, a bounded per-minute log, exact integers for money.
    const huge = await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_day: 3_000_000_000 } });
    expect([huge.status, huge.body.code]).toEqual([422, "validation.invalid_body"]);
    expect(huge.body.detail).toContain("limits.per_day");
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_minute: 1_000_001 } })).body.detail).toContain("limits.per_minute");
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { limits: { block_price: 1e21 } })).status).toBe(422);
    expect((await k.admin("PATCH", `/accounts/${accountId}`, { limits: { per_minute: 1_000_000, per_day: 2_147_483_647 } })).status).toBe(200);
    expect((await k.admin("PATCH", "/accounts/acc_01J000000000000000000000ZZ", { tier: "growth" })).status).toBe(404);
  });

  it("POST /accounts/{id}/sessions issues a new session that expires after ttlDays; ttlDays 0 no longer means forever", async () => {
    const k = kit({ config: { sessions: { ttlDays: 0 } } });
    const { accountId } = await k.account();
    const r = await k.admin("POST", `/accounts/${accountId}/sessions`);
    expect(r.status).toBe(201);
    // 0 (only reachable through defineConfig; a config file refuses it) falls back to the 90-day maximum.
    expect(r.body).toMatchObject({ account_id: accountId, expires_at: new Date(k.clock.now() + 90 * 86_400_000).toISOString() });
    k.clock.advance(90 * 86_400_000 - 1);
    expect((await k.console(r.body.session_token, "GET", "/keys")).status).toBe(200);
    k.clock.advance(1);
    expect((await k.console(r.body.session_token, "GET", "/keys")).body.code).toBe("console.invalid_session");
    expect((await k.admin("POST", "/accounts/acc_01J000000000000000000000ZZ/sessions")).status).toBe(404);
  });
});
