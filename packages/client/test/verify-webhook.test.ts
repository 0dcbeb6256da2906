// verifyWebhook (WebCrypto) against the shared signature vectors and core's signer (@noble/hashes): both schemes,
// stale timestamps, and garbage that must be refused without a throw.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { webhookHeaders } from "../../core/src/webhooks/webhook-headers.ts";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../src/index.ts";

const oracle = JSON.parse(readFileSync(fileURLToPath(new URL("../../../../shared/oracles/signatures.json", import.meta.url)), "utf8")) as {
  cases: { secret: string; body_hex: string; signature_hex: string }[];
  must_reject: string[];
};
const hexBytes = (hex: string): Uint8Array => new Uint8Array((hex.match(/../g) ?? []).map((h) => parseInt(h, 16)));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const T = 1_763_294_400;
const event = { id: "evt_01JD8Z0000000000000000000", type: "quota.warning", account_id: "acc_01JD8Z0000000000000000000", created_at: "2026-11-16T12:00:00.000Z", data: { calls_used: 80, monthly_limit: 100, threshold: 80, period_start: "2026-11-01T00:00:00.000Z", period_end: "2026-12-01T00:00:00.000Z" } };
const body = JSON.stringify(event);
const signed = (overrides: Partial<{ secret: string; body: string; timestampSeconds: number }> = {}): Record<string, string> =>
  webhookHeaders({ secret: SECRET, eventId: event.id, eventType: event.type, body, timestampSeconds: T, ...overrides });
const now = (): number => T * 1000;

describe("verifyWebhook", () => {
  it("X-Service-Signature: every vector of shared/oracles/signatures.json verifies (bare and sha256=); the must_reject values do not", async () => {
    for (const c of oracle.cases) {
      const raw = hexBytes(c.body_hex);
      for (const value of [c.signature_hex, `sha256=${c.signature_hex}`]) {
        // The vectors' bodies are not all events: the signature is accepted, the body then judged.
        const r = await verifyWebhook(raw, { "x-service-signature": value }, c.secret);
        expect(r.ok || (r as { reason: string }).reason !== "invalid_signature", `${c.secret} ${c.body_hex.slice(0, 16)}`).toBe(true);
      }
      const wrong = await verifyWebhook(raw, { "X-Service-Signature": c.signature_hex }, c.secret + "x");
      expect(wrong).toEqual({ ok: false, reason: "invalid_signature" });
    }
    const first = oracle.cases[0]!;
    for (const bad of oracle.must_reject) expect(await verifyWebhook(hexBytes(first.body_hex), { "x-service-signature": bad }, first.secret)).toEqual({ ok: false, reason: "invalid_signature" });
  });

  it("returns the typed event, by either scheme, from Headers or a plain object, string or bytes", async () => {
    const headers = signed();
    const xOnly = { "X-Service-Signature": headers["X-Service-Signature"]! };
    const a = await verifyWebhook(body, xOnly, SECRET);
    expect(a).toEqual({ ok: true, event, scheme: "x-service-signature" });
    const b = await verifyWebhook(new TextEncoder().encode(body), new Headers(headers), SECRET, { now });
    expect(b).toEqual({ ok: true, event, scheme: "standard-webhooks" });
    if (b.ok && b.event.type === "quota.warning") expect(b.event.data.threshold).toBe(80);
  });

  it("Standard Webhooks: a stale or future timestamp is refused even with a valid X-Service-Signature; a tampered body or id is refused", async () => {
    const headers = signed();
    expect(await verifyWebhook(body, headers, SECRET, { now: () => (T + 301) * 1000 })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await verifyWebhook(body, headers, SECRET, { now: () => (T - 301) * 1000 })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect((await verifyWebhook(body, headers, SECRET, { now: () => (T + 299) * 1000 })).ok).toBe(true);
    expect(await verifyWebhook(body.replace("80", "81"), headers, SECRET, { now })).toEqual({ ok: false, reason: "invalid_signature" });
    expect(await verifyWebhook(body, { ...headers, "webhook-id": "evt_other" }, SECRET, { now })).toEqual({ ok: false, reason: "invalid_signature" });
    expect(await verifyWebhook(body, { ...headers, "webhook-timestamp": String(T + 1) }, SECRET, { now })).toEqual({ ok: false, reason: "invalid_signature" });
    // Several signatures (key rotation): any v1 one may match.
    expect((await verifyWebhook(body, { ...headers, "webhook-signature": `v1,AAAA ${headers["webhook-signature"]}` }, SECRET, { now })).ok).toBe(true);
    const xOnly = { "x-service-signature": headers["X-Service-Signature"]! };
    expect(await verifyWebhook(body, xOnly, SECRET, { requireTimestamp: true })).toEqual({ ok: false, reason: "timestamp_required" });
  });

  it("a delivery during a secret rotation's overlap (two v1 entries in webhook-signature, as core signs it) verifies under either secret, not under a third", async () => {
    const NEW = "whsec_" + Buffer.alloc(24, 5).toString("base64");
    const headers = webhookHeaders({ secret: NEW, previousSecret: SECRET, eventId: event.id, eventType: event.type, body, timestampSeconds: T });
    expect(headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(await verifyWebhook(body, headers, NEW, { now })).toEqual({ ok: true, event, scheme: "standard-webhooks" });
    expect(await verifyWebhook(body, headers, SECRET, { now })).toEqual({ ok: true, event, scheme: "standard-webhooks" });
    expect(await verifyWebhook(body, headers, "whsec_" + Buffer.alloc(24, 6).toString("base64"), { now })).toEqual({ ok: false, reason: "invalid_signature" });
    // X-Service-Signature carries the new secret's only.
    const xOnly = { "x-service-signature": headers["X-Service-Signature"]! };
    expect((await verifyWebhook(body, xOnly, NEW)).ok).toBe(true);
    expect(await verifyWebhook(body, xOnly, SECRET)).toEqual({ ok: false, reason: "invalid_signature" });
    // The order of the entries does not matter, nor extra spaces.
    const [first, second] = headers["webhook-signature"]!.split(" ");
    expect((await verifyWebhook(body, { ...headers, "webhook-signature": `${second}  ${first}` }, NEW, { now })).ok).toBe(true);
  });

  it("never throws on garbage: wrong types, missing headers, non-JSON or non-event bodies, unknown event types", async () => {
    const h = signed();
    const cases: [unknown, unknown, unknown][] = [
      [body, {}, SECRET],
      [body, null, SECRET],
      [body, h, ""],
      [body, h, undefined],
      [undefined, h, SECRET],
      [42, h, SECRET],
      [body, { "webhook-signature": "v1,", "webhook-timestamp": "x", "webhook-id": "1" }, SECRET],
      [body, { "x-service-signature": ["sha256=zz"] }, SECRET],
      [body, { "webhook-signature": "v1,!!!!", "webhook-timestamp": String(T), "webhook-id": event.id }, SECRET],
    ];
    for (const [b, headers, secret] of cases) {
      const r = await (verifyWebhook as (...a: unknown[]) => Promise<{ ok: boolean }>)(b, headers, secret, { now });
      expect(r.ok).toBe(false);
    }
    for (const [text, reason] of [
      ["not json", "invalid_body"],
      ["[1]", "invalid_body"],
      ['{"id":"evt_1"}', "invalid_body"],
      [JSON.stringify({ ...event, type: "key.exploded" }), "unknown_event_type"],
    ] as const) {
      expect(await verifyWebhook(text, signed({ body: text }), SECRET, { now })).toEqual({ ok: false, reason });
    }
  });
});
