import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cryptoRandom } from "../clock/clock.ts";
import { fromBase64, generateSigningSecret, signatureHeader, signPayload, standardWebhookSignature, toBase64, verifySignature } from "./signature.ts";

interface Vectors {
  cases: { secret: string; body_hex: string; signature_hex: string }[];
  must_reject: string[];
}
const vectors: Vectors = JSON.parse(readFileSync(new URL("../../../../../shared/oracles/signatures.json", import.meta.url), "utf8"));
const hex = (h: string): Uint8Array => Uint8Array.from(h.match(/../g) ?? [], (b) => parseInt(b, 16));

describe("webhook signatures", () => {
  it("match every oracle vector (HMAC-SHA256 keyed with the whole secret, over raw bytes)", () => {
    expect(vectors.cases.length).toBeGreaterThan(0);
    for (const c of vectors.cases) {
      const body = hex(c.body_hex);
      expect(signPayload(c.secret, body)).toBe(c.signature_hex);
      expect(verifySignature(c.secret, body, c.signature_hex)).toBe(true);
      expect(verifySignature(c.secret, body, `sha256=${c.signature_hex}`)).toBe(true);
      expect(signatureHeader(c.secret, body)).toBe(`sha256=${c.signature_hex}`);
    }
  });

  it("reject every must_reject header for the first vector, and garbage of any type without throwing", () => {
    const c = vectors.cases[0]!;
    const body = hex(c.body_hex);
    for (const bad of vectors.must_reject) expect(verifySignature(c.secret, body, bad)).toBe(false);
    expect(verifySignature(c.secret, body, c.signature_hex.toUpperCase())).toBe(false);
    expect(verifySignature(c.secret, body, null)).toBe(false);
    expect(verifySignature(c.secret, body, undefined)).toBe(false);
    expect(verifySignature(c.secret, body, 42 as unknown as string)).toBe(false);
    expect(verifySignature(c.secret + "x", body, c.signature_hex)).toBe(false);
    fc.assert(fc.property(fc.string(), (h) => verifySignature(c.secret, body, h) === (h === c.signature_hex || h === `sha256=${c.signature_hex}`)));
  });

  it("a string body is signed as its UTF-8 bytes", () => {
    const s = '{"emoji":"é☃"}';
    expect(signPayload("whsec_x", s)).toBe(signPayload("whsec_x", new TextEncoder().encode(s)));
  });

  it("signing secrets are whsec_ + base64 of 24 random bytes; base64 round-trips", () => {
    const s = generateSigningSecret(cryptoRandom);
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
      const back = fromBase64(toBase64(b));
      return back !== null && back.length === b.length && back.every((x, i) => x === b[i]);
    }));
    expect(fromBase64("!!!")).toBeNull();
  });

  it("the Standard Webhooks signature matches a known-good computation", () => {
    // Standard Webhooks' published example: secret, msg id, timestamp, payload and expected signature.
    const sig = standardWebhookSignature(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}',
    );
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });
});
