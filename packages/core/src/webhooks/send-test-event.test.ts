import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { cryptoRandom, manualClock } from "../clock/clock.ts";
import { defineConfig } from "../config/config.ts";
import { isId, newId } from "../ids/new-id.ts";
import { generateSigningSecret } from "../signing/signature.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import { sendTestEvent } from "./send-test-event.ts";
import type { WebhookRequest, WebhookTransport } from "./webhook-transport.ts";
import { TransportError } from "./webhook-transport.ts";

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);
const DNS: Record<string, string[]> = { "ok.example.com": ["93.184.216.34"], "fail.example.com": ["93.184.216.35"], "down.example.com": ["93.184.216.36"], "evil.test": ["127.0.0.1"] };

describe("sendTestEvent", () => {
  it("makes one attempt per webhook, reports each outcome, and stores no delivery", async () => {
    const storage = createMemoryStorage();
    const clock = manualClock(T0);
    const config = defineConfig();
    const accountId = newId("acc", clock, cryptoRandom);
    await storage.createAccount({ id: accountId, name: "Acme", tier: "startup", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} });
    const hooks = [];
    for (const [host, events] of [["ok.example.com", ["key.created"]], ["fail.example.com", ["quota.warning"]], ["down.example.com", ["invoice.paid"]], ["evil.test", ["quota.warning"]]] as const) {
      const wh = { id: newId("wh", clock, cryptoRandom), accountId, url: `https://${host}/hook`, events: [...events], secret: generateSigningSecret(cryptoRandom), createdAt: T0 };
      await storage.createWebhook(wh, 10);
      hooks.push(wh);
    }
    const requests: WebhookRequest[] = [];
    const transport: WebhookTransport = {
      async send(req) {
        requests.push(req);
        if (req.url.hostname === "ok.example.com") return { status: 200, body: '{"ok":true}' };
        if (req.url.hostname === "fail.example.com") return { status: 500, body: "" };
        throw new TransportError("refused", "ECONNREFUSED");
      },
    };
    const resolve = async (h: string): Promise<string[]> => DNS[h] ?? [];
    const res = await sendTestEvent({ storage, clock, random: cryptoRandom, transport, resolve, config }, accountId);

    expect(isId("evt", res.event_id)).toBe(true);
    const byUrl = Object.fromEntries(res.results.map((r) => [r.url, r]));
    expect(byUrl["https://ok.example.com/hook"]).toMatchObject({ webhook_id: hooks[0]!.id, ok: true, response_status: 200, error: null });
    expect(byUrl["https://fail.example.com/hook"]).toMatchObject({ ok: false, response_status: 500, error: "http_status" });
    expect(byUrl["https://down.example.com/hook"]).toMatchObject({ ok: false, response_status: null, error: "refused" });
    expect(byUrl["https://evil.test/hook"]).toMatchObject({ ok: false, response_status: null, error: "blocked" });
    for (const r of res.results) expect(r.duration_ms).toBeGreaterThanOrEqual(0);

    // One attempt each (the blocked one never sent), whatever the subscriptions, the same event to all.
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const r of requests) {
      const secret = hooks.find((h) => h.url === r.url.href)!.secret;
      expect(await octokitVerify(secret, r.body, r.headers["X-Service-Signature"]!)).toBe(true);
      expect(r.headers["X-Service-Event-Id"]).toBe(res.event_id);
      expect(r.headers["X-Service-Event-Type"]).toBe("quota.warning");
    }
    // Plausible numbers: the startup tier's quota (1,000,000), warned at 80%, for the current period.
    expect(JSON.parse(requests[0]!.body)).toEqual({
      id: res.event_id,
      type: "quota.warning",
      account_id: accountId,
      created_at: new Date(T0).toISOString(),
      data: { calls_used: 800_000, monthly_limit: 1_000_000, threshold: 800_000, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z" },
    });
    for (const h of hooks) expect(await storage.listDeliveries(accountId, h.id, 10)).toEqual([]);
  });

  it("answers an empty result list for an account without webhooks", async () => {
    const storage = createMemoryStorage();
    const clock = manualClock(T0);
    const res = await sendTestEvent({ storage, clock, random: cryptoRandom, transport: { send: () => Promise.reject(new Error("unused")) }, resolve: async () => [], config: defineConfig() }, "acc_none");
    expect(res.results).toEqual([]);
  });
});
