import { describe, expect, it } from "vitest";
import { isoTime } from "../clock/clock.ts";
import { quotaWarningEvent } from "../events/builders.ts";
import { hashSecret } from "../keys/api-key.ts";
import { ADMIN_TOKEN, kit, LIVE_HOST, T0 } from "./test-kit.ts";
import type { Kit } from "./test-kit.ts";

/** An account made through the admin API at the kit's current time, then the clock moves on a second. */
async function accountAt(k: Kit, name: string, tier = "growth"): Promise<{ id: string; session: string }> {
  const r = await k.admin("POST", "/accounts", { name, tier });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  k.clock.advance(1000);
  return { id: r.body.account_id, session: r.body.session_token };
}

const list = (k: Kit, query = "") => k.admin("GET", `/accounts${query}`);

describe("GET /api/v1/admin/accounts", () => {
  it("pages through every account oldest first: has_more and next_cursor until the last page; filters combine; a tombstone only with status=deleted", async () => {
    const k = kit();
    const made = [];
    for (const [name, tier] of [["Acme Corp", "growth"], ["acme labs", "startup"], ["Beta", "growth"], ["Gamma", "enterprise"], ["Delta", "developer"]] as const) made.push(await accountAt(k, name, tier));
    expect((await k.admin("POST", `/accounts/${made[2]!.id}/suspend`, { reason: "review" })).status).toBe(200);
    expect((await k.admin("DELETE", `/accounts/${made[3]!.id}`)).status).toBe(200);

    const first = await list(k, "?limit=2");
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body.data.map((a: { name: string }) => a.name)).toEqual(["Acme Corp", "acme labs"]);
    expect(first.body.has_more).toBe(true);
    const second = await list(k, `?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.data.map((a: { name: string }) => a.name)).toEqual(["Beta", "Delta"]);
    expect(second.body.data[0]).toMatchObject({ status: "suspended", suspended_reason: "review", deleted_at: null });
    // Exactly the last one: nothing more, and no cursor.
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect((await list(k)).body.data).toHaveLength(4);

    const names = async (query: string) => (await list(k, query)).body.data.map((a: { name: string }) => a.name);
    expect(await names("?q=ACME")).toEqual(["Acme Corp", "acme labs"]);
    expect(await names("?q=acme&tier=startup")).toEqual(["acme labs"]);
    expect(await names("?status=suspended")).toEqual(["Beta"]);
    expect(await names("?status=active&tier=growth")).toEqual(["Acme Corp"]);
    expect(await names(`?created_after=${isoTime(T0 + 1000)}&created_before=${isoTime(T0 + 4000)}`)).toEqual(["acme labs", "Beta"]);
    expect(await names(`?created_before=${encodeURIComponent("2026-11-10T12:00:01.250+00:00")}`)).toEqual(["Acme Corp"]);
    const tombstones = await list(k, "?status=deleted");
    expect(tombstones.body.data).toEqual([
      expect.objectContaining({ account_id: made[3]!.id, name: "", tier: "enterprise", status: "deleted", deleted_at: isoTime(T0 + 5000), billing: { customer_ref: null, payment_method_ref: null } }),
    ]);
  });

  it("bad filters are 422 {detail, code, status}, naming the parameter; nothing is clamped", async () => {
    const k = kit();
    await accountAt(k, "One");
    const cases: [string, string, string][] = [
      ["?limit=0", "validation.out_of_range", "limit"],
      ["?limit=101", "validation.out_of_range", "limit"],
      ["?limit=ten", "validation.invalid_parameter", "limit"],
      ["?status=gone", "validation.invalid_parameter", "status"],
      ["?tier=gold", "validation.invalid_parameter", "tier"],
      ["?created_after=yesterday", "validation.invalid_parameter", "created_after"],
      ["?created_before=2026-11-10", "validation.invalid_parameter", "created_before"],
      ["?cursor=not-a-cursor", "validation.invalid_parameter", "cursor"],
      ["?q=", "validation.invalid_parameter", "q"],
      [`?q=${"x".repeat(201)}`, "validation.invalid_parameter", "q"],
      [`?created_after=${isoTime(T0)}&created_before=${isoTime(T0)}`, "validation.invalid_parameter", "created_after"],
    ];
    for (const [query, code, name] of cases) {
      const r = await list(k, query);
      expect(r.status, query).toBe(422);
      expect(r.body, query).toEqual({ detail: expect.stringContaining(`\`${name}\``), code, status: 422 });
    }
    // Unknown parameters are ignored, as everywhere.
    expect((await list(k, "?colour=red")).status).toBe(200);
    expect((await k.call(new Request(`${LIVE_HOST}/api/v1/admin/accounts`, { headers: { authorization: "Bearer wrong" } }))).status).toBe(401);
  });
});

describe("GET /api/v1/admin/accounts/{id}/export", () => {
  it("is one JSON document of everything held about the account, streamed a page at a time, with no key, token, hash or signing secret in it", async () => {
    const k = kit({ config: { tiers: { growth: { monthlyQuota: 2 } } } });
    const acc = await accountAt(k, "Exported Co");
    const other = await accountAt(k, "Someone Else");
    const live = await k.key(acc.session, "live", ["benchmarks:read", "merchant:read", "merchant:write"]);
    const test = await k.key(acc.session, "test");
    await k.key(other.session, "test");
    const hook = await k.console(acc.session, "POST", "/webhooks", { url: "https://hooks.example.com/in", events: ["key.created", "quota.warning", "quota.exhausted"] });
    expect(hook.status).toBe(201);
    const link = await k.admin("POST", `/accounts/${acc.id}/sign-in-links`);
    const linkToken = String(link.body.sign_in_path).split("#sign-in=")[1]!;
    const snap = await k.call(
      new Request(`${LIVE_HOST}/data/v1/merchant/vcfs`, {
        method: "POST",
        headers: { authorization: `Bearer ${live.raw}`, "content-type": "application/json" },
        body: JSON.stringify({ merchant_id: "m-1", category: "saas", period: "2026-Q3", metrics: { gross_margin: 0.5 } }),
      }),
    );
    expect(snap.status, JSON.stringify(snap.body)).toBe(200);
    // The quota (2) runs out: a charge starts (a pending invoice).
    for (let i = 0; i < 2; i++) await k.data(live.raw, "/benchmarks?category=saas");
    expect((await k.data(test.raw, "/benchmarks?category=saas")).status).not.toBe(401);
    // Enough events to cross the export's pages (500 records each).
    for (let i = 0; i < 1100; i++) await k.storage.emitEvent(quotaWarningEvent(`evt_bulk${String(i).padStart(22, "0")}`, acc.id, T0 + i, { used: i, allowance: 2, threshold: 1, periodStart: T0, periodEnd: T0 + 1 }), T0 + i);
    const [delivery] = await k.storage.claimDeliveries({ now: k.clock.now(), leaseMs: 60_000, limit: 1, perWebhook: 1 });
    await k.storage.completeDelivery({
      deliveryId: delivery!.deliveryId,
      leaseToken: delivery!.leaseToken,
      attempt: { attempt: 1, at: k.clock.now(), statusCode: 500, latencyMs: 12, error: "http_status", responseBody: "try later" },
      next: { status: "pending", at: k.clock.now() + 30_000 },
    });

    const r = await k.call(new Request(`${LIVE_HOST}/api/v1/admin/accounts/${acc.id}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="${acc.id}.json"`);
    const doc = r.body;
    expect(Object.keys(doc)).toEqual(["format", "exported_at", "account", "keys", "console_sessions", "webhooks", "deliveries", "events", "invoices", "usage", "merchant_snapshots"]);
    expect(doc.format).toBe("benchdata.account-export/1");
    expect(doc.account).toMatchObject({ account_id: acc.id, name: "Exported Co", status: "active" });
    expect(doc.keys.map((x: { key_id: string }) => x.key_id).sort()).toEqual([live.keyId, test.keyId].sort());
    expect(doc.console_sessions.map((x: { kind: string }) => x.kind)).toEqual(["session", "sign_in_link"]);
    expect(doc.webhooks).toEqual([expect.objectContaining({ webhook_id: hook.body.webhook_id, url: "https://hooks.example.com/in" })]);
    expect(doc.webhooks[0]).not.toHaveProperty("signing_secret");
    const events = doc.events as { id: string; type: string; account_id: string }[];
    // The bulk, the two keys' key.created and the quota's warning.
    expect(events).toHaveLength(1100 + 2 + 1);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.every((e) => e.account_id === acc.id)).toBe(true);
    expect(doc.deliveries.length).toBeGreaterThan(1100);
    expect(doc.deliveries.find((d: { delivery_id: string }) => d.delivery_id === delivery!.deliveryId).attempts).toEqual([
      { attempt: 1, at: isoTime(k.clock.now()), status_code: 500, latency_ms: 12, error: "http_status", response_body: "try later" },
    ]);
    expect(doc.invoices).toEqual([expect.objectContaining({ status: "pending", amount: 20000 })]);
    expect(doc.usage.days).toEqual([
      { date: isoTime(T0).slice(0, 10), environment: "live", calls: 3 },
      { date: isoTime(T0).slice(0, 10), environment: "test", calls: 1 },
    ]);
    expect(doc.usage.periods).toEqual([{ period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z", calls_used: 2, blocks: 0, exhausted: true, held_at: null }]);
    expect(doc.merchant_snapshots).toEqual([expect.objectContaining({ merchant_id: "m-1", environment: "live", metrics: { gross_margin: 0.5 } })]);

    // No secret, in any form: raw keys and their hashes, session and link tokens and their hashes, the signing secret.
    const text = JSON.stringify(doc);
    const stored = await k.storage.getWebhook(acc.id, hook.body.webhook_id);
    for (const secret of [live.raw, test.raw, hashSecret(live.raw), acc.session, hashSecret(acc.session), linkToken, hashSecret(linkToken), hook.body.signing_secret, stored!.secret]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain(other.id);
  });

  it("an unknown or deleted account is 404", async () => {
    const k = kit();
    const acc = await accountAt(k, "Gone Co");
    expect((await k.admin("GET", "/accounts/acc_00000000000000000000000000/export")).body).toEqual({ detail: "No account `acc_00000000000000000000000000`.", code: "not_found", status: 404 });
    expect((await k.admin("DELETE", `/accounts/${acc.id}`)).status).toBe(200);
    expect((await k.admin("GET", `/accounts/${acc.id}/export`)).status).toBe(404);
  });
});

describe("DELETE /api/v1/admin/accounts/{id}", () => {
  it("erases the account: the same 200 every time; then every admin and console operation answers as for an unknown account", async () => {
    const k = kit();
    const acc = await accountAt(k, "Erased Co");
    const key = await k.key(acc.session, "test");
    expect((await k.data(key.raw, "/benchmarks?category=saas")).status).not.toBe(401);
    const erased = await k.admin("DELETE", `/accounts/${acc.id}`);
    expect(erased.status).toBe(200);
    expect(erased.headers.get("cache-control")).toBe("no-store");
    const first = { account_id: acc.id, deleted: true, deleted_at: isoTime(k.clock.now()) };
    expect(erased.body).toEqual({ ...first, erasure: { status: "erased", erased_now: true, purged: expect.any(Number) } });
    k.clock.advance(5000);
    // The same erasure again: the same time, and it says it erased nothing now.
    expect(await k.admin("DELETE", `/accounts/${acc.id}`)).toMatchObject({ status: 200, body: { ...first, erasure: { status: "erased", erased_now: false } } });

    expect((await k.data(key.raw, "/benchmarks?category=saas")).body.code).toBe("auth.unknown_key");
    expect((await k.console(acc.session, "GET", "/keys")).body.code).toBe("console.invalid_session");
    const unknown = { detail: `No account \`${acc.id}\`.`, code: "not_found", status: 404 };
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { tier: "startup" }],
      ["POST", "", { tier: "startup" }],
      ["POST", "/suspend", undefined],
      ["POST", "/resume", undefined],
      ["POST", "/sessions", undefined],
      ["DELETE", "/sessions", undefined],
      ["POST", "/sign-in-links", undefined],
      ["POST", "/billing/release", undefined],
      ["GET", "/export", undefined],
    ] as const) {
      expect(await k.admin(method, `/accounts/${acc.id}${path}`, body), `${method} ${path}`).toMatchObject({ status: 404, body: unknown });
    }
    expect((await k.admin("DELETE", "/accounts/acc_00000000000000000000000000")).body.code).toBe("not_found");
    // Its id is never reused: the tombstone stays, listed only when asked for.
    expect((await list(k)).body.data).toEqual([]);
    expect((await list(k, "?status=deleted")).body.data.map((a: { account_id: string }) => a.account_id)).toEqual([acc.id]);
  });
});
