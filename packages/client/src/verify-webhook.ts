/**
 * `verifyWebhook`: checks a delivery's signature (the Standard Webhooks headers, or benchdata's `X-Service-Signature`)
 * with WebCrypto and returns the typed event. Never throws: anything wrong is `{ ok: false, reason }`.
 */
import { EVENT_TYPES } from "./generated/events.ts";
import type { WebhookEvent } from "./generated/events.ts";

/** Request headers: a `Headers`, or a plain object such as Node's `IncomingHttpHeaders`. */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Options of `verifyWebhook`. */
export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, as the Standard Webhooks libraries). */
  readonly toleranceSeconds?: number;
  /** The current time in ms (default `Date.now()`). */
  readonly now?: () => number;
  /** Refuse deliveries without the timestamped Standard Webhooks signature (replay protection). Default false. */
  readonly requireTimestamp?: boolean;
}

/** Why a delivery was refused. */
export type WebhookFailure = "missing_signature" | "invalid_signature" | "stale_timestamp" | "timestamp_required" | "invalid_body" | "unknown_event_type";

/** The outcome of `verifyWebhook`. */
export type WebhookVerification = { readonly ok: true; readonly event: WebhookEvent; readonly scheme: "standard-webhooks" | "x-service-signature" } | { readonly ok: false; readonly reason: WebhookFailure };

const encoder = new TextEncoder();

function header(headers: HeadersLike, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name) continue;
    if (typeof value === "string") return value;
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  }
  return null;
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError("body");
}

function fromHex(hex: string): Uint8Array | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function fromBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  try {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

function hmacKey(raw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

// WebCrypto's verify compares the MAC in constant time.
function verifyMac(key: CryptoKey, mac: Uint8Array, data: Uint8Array): Promise<boolean> {
  return crypto.subtle.verify("HMAC", key, mac as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

async function standardOk(secret: string, id: string, timestamp: string, signatures: string, body: Uint8Array): Promise<boolean> {
  // The key is the base64 part after `whsec_` (what Standard Webhooks libraries use), as core signs it.
  const encoded = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  const key = await hmacKey(fromBase64(encoded) ?? encoder.encode(secret));
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  let ok = false;
  for (const entry of signatures.split(" ")) {
    if (!entry.startsWith("v1,")) continue;
    const mac = fromBase64(entry.slice(3));
    // Every candidate is checked, so the time does not depend on which one matched.
    if (mac !== null && mac.length === 32 && (await verifyMac(key, mac, signed))) ok = true;
  }
  return ok;
}

async function xServiceOk(secret: string, value: string, body: Uint8Array): Promise<boolean> {
  const mac = fromHex(value.startsWith("sha256=") ? value.slice(7) : value);
  if (mac === null) return false;
  return verifyMac(await hmacKey(encoder.encode(secret)), mac, body);
}

function eventOf(body: Uint8Array): WebhookVerification {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return { ok: false, reason: "invalid_body" };
  }
  const e = parsed as Record<string, unknown> | null;
  if (typeof e !== "object" || e === null || Array.isArray(e)) return { ok: false, reason: "invalid_body" };
  if (typeof e.id !== "string" || typeof e.type !== "string" || typeof e.account_id !== "string" || typeof e.created_at !== "string") return { ok: false, reason: "invalid_body" };
  if (typeof e.data !== "object" || e.data === null) return { ok: false, reason: "invalid_body" };
  if (!(EVENT_TYPES as readonly string[]).includes(e.type)) return { ok: false, reason: "unknown_event_type" };
  return { ok: true, event: e as unknown as WebhookEvent, scheme: "x-service-signature" };
}

/**
 * Verifies a webhook delivery over the raw body bytes (before any JSON parsing) and returns the typed event.
 * With the Standard Webhooks headers present, their signature and a fresh `webhook-timestamp` are required (an
 * `X-Service-Signature` does not override a stale timestamp); otherwise `X-Service-Signature` is checked.
 */
export async function verifyWebhook(rawBody: string | Uint8Array | ArrayBuffer, headers: HeadersLike, secret: string, options: VerifyWebhookOptions = {}): Promise<WebhookVerification> {
  try {
    if (typeof secret !== "string" || secret === "" || typeof headers !== "object" || headers === null) return { ok: false, reason: "missing_signature" };
    const body = bytesOf(rawBody);
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signature = header(headers, "webhook-signature");
    if (timestamp !== null || signature !== null) {
      if (id === null || timestamp === null || signature === null) return { ok: false, reason: "missing_signature" };
      if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "invalid_signature" };
      const now = (options.now ?? Date.now)() / 1000;
      if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: "stale_timestamp" };
      if (!(await standardOk(secret, id, timestamp, signature, body))) return { ok: false, reason: "invalid_signature" };
      const result = eventOf(body);
      return result.ok ? { ...result, scheme: "standard-webhooks" } : result;
    }
    if (options.requireTimestamp === true) return { ok: false, reason: "timestamp_required" };
    const xs = header(headers, "x-service-signature");
    if (xs === null) return { ok: false, reason: "missing_signature" };
    if (!(await xServiceOk(secret, xs, body))) return { ok: false, reason: "invalid_signature" };
    return eventOf(body);
  } catch {
    return { ok: false, reason: "invalid_signature" };
  }
}
