/** Webhook signatures: HMAC-SHA256 over the raw body bytes, keyed with the whole `signing_secret` (prefix included). */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { RandomSource } from "../clock/clock.ts";
import { timingSafeEqual } from "../keys/constant-time.ts";

const encoder = new TextEncoder();

function bytesOf(body: Uint8Array | string): Uint8Array {
  return typeof body === "string" ? encoder.encode(body) : body;
}

/** Lowercase hex HMAC-SHA256 of `body` keyed with the UTF-8 bytes of `secret` (the `X-Service-Signature` value, bare). */
export function signPayload(secret: string, body: Uint8Array | string): string {
  return bytesToHex(hmac(sha256, utf8ToBytes(secret), bytesOf(body)));
}

/** The `X-Service-Signature` header value: `sha256=<hex>`. */
export function signatureHeader(secret: string, body: Uint8Array | string): string {
  return `sha256=${signPayload(secret, body)}`;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Whether `header` is a valid signature of `body` under `secret`: bare lowercase hex or `sha256=<hex>`,
 * compared in constant time. Never throws: garbage of any type is simply invalid.
 */
export function verifySignature(secret: string, body: Uint8Array | string, header: string | null | undefined): boolean {
  try {
    if (typeof header !== "string" || typeof secret !== "string") return false;
    const given = header.startsWith("sha256=") ? header.slice(7) : header;
    if (!HEX64.test(given)) return false;
    return timingSafeEqual(signPayload(secret, body), given);
  } catch {
    return false;
  }
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard base64 of bytes (with padding). */
export function toBase64(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + "==";
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + "=";
  }
  return out;
}

/** Bytes of a standard base64 string, or null when it is not valid base64. */
export function fromBase64(text: string): Uint8Array | null {
  const clean = text.replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]*$/.test(clean) || clean.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let j = 0;
  for (let i = 0; i < clean.length; i++) {
    acc = (acc << 6) | B64.indexOf(clean[i]!);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** A new signing secret `whsec_<base64 of 24 random bytes>`: usable both for `X-Service-Signature` and Standard Webhooks. */
export function generateSigningSecret(random: RandomSource): string {
  return `whsec_${toBase64(random.fill(new Uint8Array(24)))}`;
}

/**
 * The Standard Webhooks `webhook-signature` value, `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed
 * with the base64-decoded part of the secret after `whsec_` (as the Standard Webhooks libraries expect).
 */
export function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret) ?? utf8ToBytes(secret);
  const mac = hmac(sha256, key, encoder.encode(`${id}.${timestampSeconds}.${body}`));
  return `v1,${toBase64(mac)}`;
}
