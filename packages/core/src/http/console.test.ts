import { describe, expect, it } from "vitest";
import { ServiceError } from "../errors/service-error.ts";
import { kit, LIVE_HOST, recorder, T0 } from "./test-kit.ts";

const DAY = 86_400_000;

describe("console sessions", () => {
  it("missing, malformed, unknown and expired session tokens → 401 console.invalid_session", async () => {
    const k = kit({ config: { sessions: { ttlDays: 1 } } });
    const { session } = await k.account();
    const bare = await k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`));
    expect(bare.body).toEqual({ detail: expect.any(String), code: "console.invalid_session", status: 401 });
    expect((await k.console("nope", "GET", "/keys")).body.code).toBe("console.invalid_session");
    expect((await k.console("bds_sess_" + "x".repeat(48), "GET", "/keys")).body.code).toBe("console.invalid_session");
    expect((await k.console(session, "GET", "/keys")).status).toBe(200);
    k.clock.advance(DAY);
    expect((await k.console(session, "GET", "/keys")).body.code).toBe("console.invalid_session");
  });

  it("an API key is not a session token", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    expect((await k.console(key.raw, "GET", "/keys")).status).toBe(401);
  });

  it("consoleAuth is pluggable: a function from the request to an account id", async () => {
    const base = kit();
    const { accountId } = await base.account();
    const k = kit({ storage: base.storage, consoleAuth: (r) => (r.headers.get("x-embedder-user") === "alice" ? accountId : null) });
    const ok = await k.call(new Request(`${LIVE_HOST}/api/v1/console/usage/summary`, { headers: { "x-embedder-user": "alice" } }));
    expect(ok.status).toBe(200);
    expect((await k.call(new Request(`${LIVE_HOST}/api/v1/console/usage/summary`))).status).toBe(401);
  });
});

describe("console keys", () => {
  it("POST /keys → 201 with the contract's fields, raw key shown once, emits key.created", async () => {
    const eventsWritten = recorder<[]>();
    const k = kit({ hooks: { eventsWritten } });
    const { session } = await k.account("startup");
    const r = await k.console(session, "POST", "/keys", { name: "server", environment: "live", scopes: ["benchmarks:read", "merchant:read", "benchmarks:read"] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "server", environment: "live", scopes: ["benchmarks:read", "merchant:read"], is_active: true, created_at: new Date(T0).toISOString() });
    expect(r.body.key_id).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.body.raw_key).toMatch(/^svc_live_[A-Za-z0-9_-]{48}$/);
    expect(r.body.prefix).toBe(r.body.raw_key.slice(0, 12));
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(eventsWritten.calls.length).toBeGreaterThan(0);
    const claimed = await k.storage.claimDeliveries({ now: T0, leaseMs: 1000, limit: 10, perWebhook: 10 });
    expect(claimed).toEqual([]); // no webhooks yet; the event itself is in storage
  });

  it("scopes beyond the tier → 403 console.scope_not_permitted naming the scope", async () => {
    const k = kit();
    const { session } = await k.account("developer");
    const r = await k.console(session, "POST", "/keys", { name: "x", environment: "test", scopes: ["benchmarks:read", "score:read"] });
    expect([r.status, r.body.code]).toEqual([403, "console.scope_not_permitted"]);
    expect(r.body.detail).toContain("score:read");
  });

  it("unknown scope, bad environment, missing name, unknown field → 422 validation.invalid_body naming the field", async () => {
    const k = kit();
    const { session } = await k.account();
    const cases: [unknown, string][] = [
      [{ name: "x", environment: "test", scopes: ["benchmarks:read", "everything:write"] }, "scopes[1]"],
      [{ name: "x", environment: "prod", scopes: ["benchmarks:read"] }, "environment"],
      [{ environment: "test", scopes: ["benchmarks:read"] }, "name"],
      [{ name: "x", environment: "test", scopes: [] }, "scopes"],
      [{ name: "x", environment: "test", scopes: ["benchmarks:read"], admin: true }, "admin"],
      [["not", "an", "object"], "object"],
    ];
    for (const [body, field] of cases) {
      const r = await k.console(session, "POST", "/keys", body);
      expect([r.status, r.body.code], field).toEqual([422, "validation.invalid_body"]);
      expect(r.body.detail, field).toContain(field);
    }
  });

  it("the per-account key limit → 409 console.limit_reached; revoked keys do not count", async () => {
    const k = kit({ config: { keys: { maxPerAccount: 2 } } });
    const { session } = await k.account();
    const a = await k.key(session);
    await k.key(session);
    const r = await k.console(session, "POST", "/keys", { name: "x", environment: "test", scopes: ["benchmarks:read"] });
    expect([r.status, r.body.code]).toEqual([409, "console.limit_reached"]);
    await k.console(session, "POST", `/keys/${a.keyId}/revoke`);
    expect((await k.console(session, "POST", "/keys", { name: "x", environment: "test", scopes: ["benchmarks:read"] })).status).toBe(201);
  });

  it("GET /keys lists without raw keys or hashes, with rotation_due after 90 days", async () => {
    const k = kit();
    const { accountId, session } = await k.account();
    const key = await k.key(session);
    const list = await k.console(session, "GET", "/keys");
    expect(list.body.data).toHaveLength(1);
    const item = list.body.data[0];
    expect(Object.keys(item).sort()).toEqual(["created_at", "environment", "is_active", "key_id", "last_used_at", "name", "prefix", "revoked_at", "rotated_at", "rotation_due", "scopes"]);
    expect(JSON.stringify(list.body)).not.toContain(key.raw.slice(12));
    expect(item.rotation_due).toBe(false);
    k.clock.advance(90 * DAY + 1);
    // The first session expired after 30 days; the operator issues a new one.
    const later = await k.admin("POST", `/accounts/${accountId}/sessions`);
    const s2 = later.body.session_token as string;
    expect((await k.console(s2, "GET", "/keys")).body.data[0].rotation_due).toBe(true);
    const rotated = await k.console(s2, "POST", `/keys/${key.keyId}/rotate`);
    expect(rotated.body.rotation_due).toBe(false);
    expect(rotated.body.rotated_at).toBe(new Date(k.clock.now()).toISOString());
  });

  it("GET /keys/{id} shows a key; another account's key → 404 not_found everywhere", async () => {
    const k = kit();
    const a = await k.account();
    const b = await k.account();
    const key = await k.key(a.session);
    expect((await k.console(a.session, "GET", `/keys/${key.keyId}`)).body.key_id).toBe(key.keyId);
    for (const [method, path] of [["GET", `/keys/${key.keyId}`], ["POST", `/keys/${key.keyId}/rotate`], ["POST", `/keys/${key.keyId}/revoke`]] as const) {
      const r = await k.console(b.session, method, path);
      expect([r.status, r.body.code], path).toEqual([404, "not_found"]);
    }
    expect((await k.data(key.raw, "/benchmarks?category=saas")).status).toBe(200);
  });

  it("rotate: new raw key and prefix, same id; a revoked key → 409 console.key_revoked", async () => {
    const k = kit();
    const { session } = await k.account();
    const key = await k.key(session);
    const r = await k.console(session, "POST", `/keys/${key.keyId}/rotate`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key_id: key.keyId, is_active: true });
    expect(r.body.raw_key).not.toBe(key.raw);
    expect(r.body.prefix).toBe(r.body.raw_key.slice(0, 12));
    const revoked = await k.console(session, "POST", `/keys/${key.keyId}/revoke`);
    expect(revoked.body).toMatchObject({ is_active: false, revoked_at: expect.any(String) });
    expect((await k.console(session, "POST", `/keys/${key.keyId}/revoke`)).status).toBe(200);
    const again = await k.console(session, "POST", `/keys/${key.keyId}/rotate`);
    expect([again.status, again.body.code]).toEqual([409, "console.key_revoked"]);
  });
});

describe("console usage summary", () => {
  it("reports today, limits, the month's calls, balance and active keys per the contract", async () => {
    const k = kit({ config: { tiers: { startup: { monthlyQuota: 100 } } } });
    const { session } = await k.account("startup");
    const live = await k.key(session, "live");
    const test = await k.key(session, "test");
    const r0 = await k.console(session, "GET", "/usage/summary");
    expect(r0.body).toMatchObject({ today: 0, daily_limit: 100_000, month: 0, monthly_limit: 100, token_balance: 100, active_keys: 2 });
    await k.publish("saas", "all", "2026-Q3", "gross_margin", Array.from({ length: 30 }, (_, i) => i));
    await k.data(live.raw, "/benchmarks?category=saas");
    await k.data(live.raw, "/benchmarks?category=saas");
    await k.data(test.raw, "/benchmarks?category=saas");
    const r = await k.console(session, "GET", "/usage/summary");
    expect(r.body).toMatchObject({ today: 3, month: 2, monthly_limit: 100, token_balance: 98, active_keys: 2, quota_exhausted: false, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z" });
  });
});

describe("console webhooks", () => {
  it("POST /webhooks → 201 with a whsec_ secret; events de-duplicated; listing never shows secrets", async () => {
    const k = kit();
    const { session } = await k.account();
    const r = await k.console(session, "POST", "/webhooks", { url: "https://hooks.example.com/benchdata", events: ["quota.warning", "key.rotated", "quota.warning"] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ url: "https://hooks.example.com/benchdata", events: ["quota.warning", "key.rotated"], created_at: new Date(T0).toISOString() });
    expect(r.body.webhook_id).toMatch(/^wh_/);
    expect(r.body.signing_secret).toMatch(/^whsec_/);
    const list = await k.console(session, "GET", "/webhooks");
    expect(list.body.data).toEqual([
      { webhook_id: r.body.webhook_id, url: r.body.url, events: r.body.events, created_at: r.body.created_at, status: "active", disabled_reason: null, disabled_at: null },
    ]);
    expect(JSON.stringify(list.body)).not.toContain("whsec_");
    expect(JSON.stringify((await k.console(session, "GET", `/webhooks/${r.body.webhook_id}`)).body)).not.toContain("whsec_");
  });

  it("URL checks: not https, unparsable, with credentials → 422 validation.invalid_url; http allowed by config", async () => {
    const k = kit();
    const { session } = await k.account();
    for (const url of ["http://hooks.example.com/x", "not a url", "https://user:pw@hooks.example.com/", "ftp://hooks.example.com/"]) {
      const r = await k.console(session, "POST", "/webhooks", { url, events: ["key.created"] });
      expect([r.status, r.body.code], url).toEqual([422, "validation.invalid_url"]);
    }
    const dev = kit({ config: { webhooks: { allowHttp: true } } });
    const d = await dev.account();
    expect((await dev.console(d.session, "POST", "/webhooks", { url: "http://localhost:9999/hook", events: ["key.created"] })).status).toBe(201);
  });

  it("an injected checkUrl refuses (e.g. private addresses) with its own error", async () => {
    const checked: string[] = [];
    const checkUrl = async (url: string) => {
      checked.push(url);
      return url.includes("10.0.0.1") ? new ServiceError(422, "validation.invalid_url", "Invalid webhook URL: it resolves to a private address.") : null;
    };
    const k = kit({ webhooks: { checkUrl } });
    const { session } = await k.account();
    const r = await k.console(session, "POST", "/webhooks", { url: "https://10.0.0.1/hook", events: ["key.created"] });
    expect(r.body).toMatchObject({ code: "validation.invalid_url", detail: expect.stringContaining("private") });
    expect((await k.console(session, "POST", "/webhooks", { url: "https://ok.example.com/", events: ["key.created"] })).status).toBe(201);
    expect(checked).toEqual(["https://10.0.0.1/hook", "https://ok.example.com/"]);
  });

  it("events must be known and non-empty → 422 validation.invalid_body", async () => {
    const k = kit();
    const { session } = await k.account();
    const unknown = await k.console(session, "POST", "/webhooks", { url: "https://x.example.com/", events: ["key.created", "payment.done"] });
    expect(unknown.body).toMatchObject({ code: "validation.invalid_body", detail: expect.stringContaining("events[1]") });
    expect((await k.console(session, "POST", "/webhooks", { url: "https://x.example.com/", events: [] })).body.code).toBe("validation.invalid_body");
  });

  it("the per-account webhook limit → 409 console.limit_reached", async () => {
    const k = kit({ config: { webhooks: { maxPerAccount: 1 } } });
    const { session } = await k.account();
    await k.console(session, "POST", "/webhooks", { url: "https://a.example.com/", events: ["key.created"] });
    const r = await k.console(session, "POST", "/webhooks", { url: "https://b.example.com/", events: ["key.created"] });
    expect([r.status, r.body.code]).toEqual([409, "console.limit_reached"]);
  });

  it("deliveries: listed with their attempts; retry makes one due; DELETE → 204; another account's → 404", async () => {
    const eventsWritten = recorder<[]>();
    const k = kit({ hooks: { eventsWritten } });
    const { session } = await k.account();
    const other = await k.account();
    const wh = (await k.console(session, "POST", "/webhooks", { url: "https://hooks.example.com/", events: ["key.created"] })).body;
    await k.key(session);
    const [claimed] = await k.storage.claimDeliveries({ now: k.clock.now(), leaseMs: 30_000, limit: 10, perWebhook: 10 });
    await k.storage.completeDelivery({ deliveryId: claimed!.deliveryId, leaseToken: claimed!.leaseToken, attempt: { attempt: 1, at: k.clock.now(), statusCode: 500, latencyMs: 42, error: "http_status", responseBody: "oops" }, next: { status: "dead" } });
    const list = await k.console(session, "GET", `/webhooks/${wh.webhook_id}/deliveries`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({
        delivery_id: claimed!.deliveryId,
        event_type: "key.created",
        status: "dead",
        attempt_count: 1,
        attempts: [{ attempt: 1, at: new Date(T0).toISOString(), status_code: 500, latency_ms: 42, error: "http_status", response_body: "oops" }],
      }),
    ]);
    expect((await k.console(session, "GET", `/webhooks/${wh.webhook_id}/deliveries?limit=0`)).body.code).toBe("validation.out_of_range");
    eventsWritten.calls.length = 0;
    const retried = await k.console(session, "POST", `/webhooks/${wh.webhook_id}/deliveries/${claimed!.deliveryId}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe("pending");
    expect(eventsWritten.calls).toHaveLength(1);
    expect((await k.console(other.session, "GET", `/webhooks/${wh.webhook_id}/deliveries`)).status).toBe(404);
    expect((await k.console(other.session, "POST", `/webhooks/${wh.webhook_id}/deliveries/${claimed!.deliveryId}/retry`)).status).toBe(404);
    expect((await k.console(other.session, "DELETE", `/webhooks/${wh.webhook_id}`)).status).toBe(404);
    const del = await k.call(new Request(`${LIVE_HOST}/api/v1/console/webhooks/${wh.webhook_id}`, { method: "DELETE", headers: { authorization: `Bearer ${session}` } }));
    expect([del.status, del.body]).toEqual([204, ""]);
    expect((await k.console(session, "GET", `/webhooks/${wh.webhook_id}`)).status).toBe(404);
  });

  it("POST /webhooks/test goes to the injected sender; without one → 501 not_implemented", async () => {
    const none = kit();
    const a = await none.account();
    expect((await none.console(a.session, "POST", "/webhooks/test")).body.code).toBe("not_implemented");
    const sentFor: string[] = [];
    const sendTest = async (accountId: string) => {
      sentFor.push(accountId);
      return { event_id: "evt_x", results: [{ webhook_id: "wh_1", url: "https://x", ok: true, response_status: 200, duration_ms: 3, error: null }] };
    };
    const k = kit({ webhooks: { sendTest } });
    const { accountId, session } = await k.account();
    const r = await k.console(session, "POST", "/webhooks/test");
    expect(r.status).toBe(200);
    expect(r.body.event_id).toBe("evt_x");
    expect(sentFor).toEqual([accountId]);
  });
});

describe("console billing", () => {
  const tiny = { tiers: { developer: { monthlyQuota: 1, blockSize: 5, blockPrice: 700 } } };

  it("POST /billing/retry after a failed charge starts a new one; otherwise 409 billing.nothing_to_charge", async () => {
    const chargeRequested = recorder<[string]>();
    const k = kit({ config: tiny, hooks: { chargeRequested } });
    const { session } = await k.account("developer");
    expect((await k.console(session, "POST", "/billing/retry")).body.code).toBe("billing.nothing_to_charge");
    const live = await k.key(session, "live");
    await k.publish("saas", "all", "2026-Q3", "gross_margin", Array.from({ length: 30 }, (_, i) => i));
    await k.data(live.raw, "/benchmarks?category=saas");
    expect((await k.data(live.raw, "/benchmarks?category=saas")).status).toBe(402);
    const [charge] = await k.storage.claimCharges({ now: k.clock.now(), leaseMs: 1000, limit: 1 });
    await k.storage.settleCharge({ invoiceId: charge!.invoice.id, leaseToken: charge!.leaseToken, outcome: { status: "failed", processorRef: "pi_x", reason: "card_declined", at: k.clock.now() }, eventIds: { exhausted: "evt_01J00000000000000000000003", result: "evt_01J00000000000000000000004" } });
    const failed = await k.data(live.raw, "/benchmarks?category=saas");
    expect(failed.status).toBe(402);
    expect(failed.body.detail).toMatch(/failed/);
    chargeRequested.calls.length = 0;
    k.clock.advance(1000);
    const retry = await k.console(session, "POST", "/billing/retry");
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ status: "pending", amount: 700, attempt: 2 });
    expect(chargeRequested.calls).toEqual([[retry.body.invoice_id]]);
    const invoices = (await k.console(session, "GET", "/invoices")).body.data;
    expect(invoices.map((i: { status: string }) => i.status)).toEqual(["pending", "failed"]);
    expect(invoices[1]).toMatchObject({ processor_ref: "pi_x", failure_reason: "card_declined", currency: "usd" });
    expect(invoices[1].invoice_id).toMatch(/^inv_/);
  });
});

describe("hostile bodies", () => {
  async function post(body: BodyInit | null, headers: Record<string, string>) {
    const k = kit();
    const { session } = await k.account();
    return k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session}`, ...headers }, body, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit));
  }

  it("Content-Type other than application/json → 415 request.unsupported_media_type", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"]) {
      const r = await post('{"name":"x"}', { "content-type": type });
      expect([r.status, r.body.code], type).toEqual([415, "request.unsupported_media_type"]);
    }
    expect((await post('{"name":"x"}', {})).status).toBe(415);
  });

  it("application/json with a charset parameter is accepted", async () => {
    const r = await post(JSON.stringify({ name: "x", environment: "test", scopes: ["benchmarks:read"] }), { "content-type": "application/json; charset=utf-8" });
    expect(r.status).toBe(201);
  });

  it("Content-Length over 1 MB → 413 request.too_large before reading", async () => {
    const r = await post("{}", { "content-type": "application/json", "content-length": String(2 * 1024 * 1024) });
    expect([r.status, r.body.code]).toEqual([413, "request.too_large"]);
  });

  it("a streamed body over 1 MB without Content-Length → 413, counted while reading", async () => {
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024).fill(32);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        sent += chunk.byteLength;
        if (sent > 8 * 1024 * 1024) c.close();
        else c.enqueue(chunk);
      },
    });
    const r = await post(stream, { "content-type": "application/json" });
    expect([r.status, r.body.code]).toEqual([413, "request.too_large"]);
    expect(sent).toBeLessThan(2 * 1024 * 1024);
  });

  it("broken JSON, empty body, invalid UTF-8 → 400 request.invalid_json", async () => {
    for (const body of ['{"name": ', "", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])]) {
      const r = await post(body as BodyInit, { "content-type": "application/json" });
      expect([r.status, r.body.code]).toEqual([400, "request.invalid_json"]);
    }
  });

  it("a body that stops arriving (the client went away, or the server's request timeout ended it) → 408 request.timeout, logged as nothing internal (issue 29)", async () => {
    const errors: unknown[] = [];
    const k = kit({ logger: { info: () => {}, warn: () => {}, error: (...a: unknown[]) => void errors.push(a) } });
    const { session } = await k.account();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"name":'));
        c.error(new Error("aborted"));
      },
    });
    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit));
    expect(r.body).toEqual({ detail: expect.stringContaining("did not arrive"), code: "request.timeout", status: 408 });
    expect(errors).toEqual([]);
  });

  it("authentication comes before body checks", async () => {
    const k = kit();
    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/console/keys`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }));
    expect(r.status).toBe(401);
  });
});
