import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/config-schema.ts";
import { scopesForTier } from "../scopes/scopes.ts";
import { kit, LIVE_HOST } from "./test-kit.ts";

const CONSOLE = `${LIVE_HOST}/api/v1/console`;

/** A browser-like request: the session cookie, the console's CSRF header, same-origin. */
function browser(method: string, path: string, cookie: string | null, body?: unknown, extra: Record<string, string> = {}): Request {
  const headers: Record<string, string> = { "x-benchdata-console": "1", "sec-fetch-site": "same-origin", ...extra };
  if (cookie !== null) headers.cookie = cookie;
  if (body !== undefined) headers["content-type"] = "application/json";
  return new Request(CONSOLE + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

function cookieOf(setCookie: string | null): string {
  expect(setCookie).toMatch(/^__Host-bds_console=bds_sess_[A-Za-z0-9_-]{48}; Path=\/; Max-Age=\d+; HttpOnly; Secure; SameSite=Strict$/);
  return (setCookie as string).split(";")[0] as string;
}

describe("console sign-in links", () => {
  it("the admin API creates a one-time link whose token lives in the fragment; it signs in once and only before it expires", async () => {
    const k = kit();
    const { accountId } = await k.account();
    const link = await k.admin("POST", `/accounts/${accountId}/sign-in-links`);
    expect(link.status).toBe(201);
    expect(link.body.sign_in_path).toMatch(/^\/console\/#sign-in=bds_link_[A-Za-z0-9_-]{48}$/);
    expect(link.body.sign_in_url).toBe(LIVE_HOST + link.body.sign_in_path);
    expect(link.body.expires_at).toBe(new Date(k.clock.now() + 15 * 60_000).toISOString());
    const token = link.body.sign_in_path.split("=")[1];

    const first = await k.call(browser("POST", "/sign-in", null, { token }));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ account_id: accountId, expires_at: new Date(k.clock.now() + 30 * 86_400_000).toISOString() });
    const cookie = cookieOf(first.headers.get("set-cookie"));
    expect((await k.call(browser("GET", "/keys", cookie))).status).toBe(200);

    const again = await k.call(browser("POST", "/sign-in", null, { token }));
    expect([again.status, again.body.code]).toEqual([401, "console.invalid_sign_in"]);
    expect(again.headers.get("set-cookie")).toBeNull();

    const late = await k.admin("POST", `/accounts/${accountId}/sign-in-links`);
    k.clock.advance(15 * 60_000);
    const expired = await k.call(browser("POST", "/sign-in", null, { token: late.body.sign_in_path.split("=")[1] }));
    expect([expired.status, expired.body.code]).toEqual([401, "console.invalid_sign_in"]);
    expect((await k.admin("POST", "/accounts/acc_01J000000000000000000000ZZ/sign-in-links")).status).toBe(404);
  });

  it("a sign-in link token is stored only as its hash", async () => {
    const k = kit();
    const { accountId } = await k.account();
    const link = await k.admin("POST", `/accounts/${accountId}/sign-in-links`);
    const token: string = link.body.sign_in_path.split("=")[1];
    // The raw token redeems through its hash; redeeming by the raw text finds nothing.
    expect(await k.storage.redeemSignInLink({ linkHash: token, now: k.clock.now(), session: { tokenHash: "x", createdAt: 0, expiresAt: k.clock.now() + 1 } })).toBeNull();
    expect((await k.call(browser("POST", "/sign-in", null, { token }))).status).toBe(200);
  });

  it("a pasted session token signs the browser in with that same session; garbage is refused without a cookie", async () => {
    const k = kit();
    const { session } = await k.account();
    const r = await k.call(browser("POST", "/sign-in", null, { token: session }));
    expect(r.status).toBe(200);
    expect(cookieOf(r.headers.get("set-cookie"))).toBe(`__Host-bds_console=${session}`);
    for (const token of ["", "nope", "bds_sess_" + "x".repeat(48), "bds_link_" + "x".repeat(48)]) {
      const bad = await k.call(browser("POST", "/sign-in", null, { token }));
      expect([bad.status, bad.body.code]).toEqual([401, "console.invalid_sign_in"]);
    }
  });
});

describe("console CSRF with the session cookie", () => {
  it("a state change by cookie without the console header, or from another site, is refused 403; GETs and bearer scripts are not affected", async () => {
    const k = kit();
    const { session } = await k.account();
    const cookie = `__Host-bds_console=${session}`;
    const body = { name: "k", environment: "test", scopes: ["benchmarks:read"] };
    const forged = new Request(CONSOLE + "/keys", { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify(body) });
    const r1 = await k.call(forged);
    expect([r1.status, r1.body.code]).toEqual([403, "console.csrf_refused"]);
    const r2 = await k.call(browser("POST", "/keys", cookie, body, { "sec-fetch-site": "cross-site" }));
    expect([r2.status, r2.body.code]).toEqual([403, "console.csrf_refused"]);
    // Login CSRF: a forged sign-in is refused the same way.
    const r3 = await k.call(new Request(CONSOLE + "/sign-in", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: session }) }));
    expect([r3.status, r3.body.code]).toEqual([403, "console.csrf_refused"]);
    expect((await k.call(new Request(CONSOLE + "/keys", { headers: { cookie } }))).status).toBe(200);
    expect((await k.call(browser("POST", "/keys", cookie, body))).status).toBe(201);
    expect((await k.console(session, "POST", "/keys", body)).status).toBe(201);
  });
});

describe("ending sessions", () => {
  it("sign-out ends the presenting session at once (cookie or bearer) and clears the cookie; other sessions live on", async () => {
    const k = kit();
    const { accountId, session } = await k.account();
    const second = (await k.admin("POST", `/accounts/${accountId}/sessions`)).body.session_token as string;
    const cookie = `__Host-bds_console=${session}`;
    const out = await k.call(browser("POST", "/sign-out", cookie));
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ signed_out: true });
    expect(out.headers.get("set-cookie")).toBe("__Host-bds_console=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict");
    expect((await k.console(session, "GET", "/keys")).body.code).toBe("console.invalid_session");
    expect((await k.call(browser("GET", "/keys", cookie))).body.code).toBe("console.invalid_session");
    expect((await k.console(second, "GET", "/keys")).status).toBe(200);
    // A script signs out with its bearer token.
    expect((await k.console(second, "POST", "/sign-out")).body).toEqual({ signed_out: true });
    expect((await k.console(second, "GET", "/keys")).status).toBe(401);
    expect((await k.console(second, "POST", "/sign-out")).body).toEqual({ signed_out: false });
    // Sign-out by cookie needs the CSRF header (a forged request cannot end a user's session).
    const third = (await k.admin("POST", `/accounts/${accountId}/sessions`)).body.session_token as string;
    const forged = await k.call(new Request(CONSOLE + "/sign-out", { method: "POST", headers: { cookie: `__Host-bds_console=${third}` } }));
    expect(forged.status).toBe(403);
    expect((await k.console(third, "GET", "/keys")).status).toBe(200);
  });

  it("DELETE /admin/accounts/{id}/sessions ends every session and unused sign-in link of that account only", async () => {
    const k = kit();
    const a = await k.account();
    const b = await k.account();
    const a2 = (await k.admin("POST", `/accounts/${a.accountId}/sessions`)).body.session_token as string;
    const link = await k.admin("POST", `/accounts/${a.accountId}/sign-in-links`);
    const r = await k.admin("DELETE", `/accounts/${a.accountId}/sessions`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ account_id: a.accountId, revoked_sessions: 2 });
    expect((await k.console(a.session, "GET", "/keys")).status).toBe(401);
    expect((await k.console(a2, "GET", "/keys")).status).toBe(401);
    expect((await k.call(browser("POST", "/sign-in", null, { token: link.body.sign_in_path.split("=")[1] }))).status).toBe(401);
    expect((await k.console(b.session, "GET", "/keys")).status).toBe(200);
    expect((await k.admin("DELETE", "/accounts/acc_01J000000000000000000000ZZ/sessions")).status).toBe(404);
  });

  it("a config file refuses sessions.ttlDays 0 and anything above the 90-day maximum", () => {
    expect(resolveConfig({ sessions: { ttlDays: 0 } })).toEqual({ ok: false, errors: ["sessions.ttlDays: must be at least 1 (sessions always expire)"] });
    expect(resolveConfig({ sessions: { ttlDays: 91 } })).toEqual({ ok: false, errors: ["sessions.ttlDays: must be at most 90 (the maximum session lifetime)"] });
    expect(resolveConfig({ sessions: { ttlDays: 90, signInLinkMinutes: 60 } }).ok).toBe(true);
  });
});

describe("console account and daily usage", () => {
  it("GET /account tells the page the tier, the scopes it permits, the limits and the session's expiry", async () => {
    const k = kit();
    const { accountId, session } = await k.account("developer");
    const r = await k.console(session, "GET", "/account");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ account_id: accountId, tier: "developer", currency: "usd", limits: { monthly_quota: 100_000, per_day: 10_000 } });
    expect(r.body.permitted_scopes).toEqual(scopesForTier("developer"));
    expect(r.body.permitted_scopes).toContain("benchmarks:read");
    expect(r.body.permitted_scopes).not.toContain("export:read");
    expect(r.body.session_expires_at).toBe(new Date(k.clock.now() + 30 * 86_400_000).toISOString());
  });

  it("GET /usage/daily lists each of the last N days, zero-filled, today last", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    for (let i = 0; i < 3; i++) expect((await k.data(key.raw, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4")).status).toBe(200);
    k.clock.advance(2 * 86_400_000);
    expect((await k.data(key.raw, "/benchmarks/percentile?category=fintech&metric=gross_margin&value=0.4")).status).toBe(200);
    const r = await k.console(session, "GET", "/usage/daily?days=4");
    expect(r.status).toBe(200);
    const day = (offset: number) => new Date(k.clock.now() + offset * 86_400_000).toISOString().slice(0, 10);
    expect(r.body.data).toEqual([
      { date: day(-3), calls: 0 },
      { date: day(-2), calls: 3 },
      { date: day(-1), calls: 0 },
      { date: day(0), calls: 1 },
    ]);
    expect((await k.console(session, "GET", "/usage/daily")).body.data).toHaveLength(30);
    expect((await k.console(session, "GET", "/usage/daily?days=91")).status).toBe(422);
  });
});
