import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cryptoRandom } from "../clock/clock.ts";
import type { RandomSource } from "../clock/clock.ts";
import { generateApiKey, hashSecret, keyDisplayPrefix, parseApiKey, randomToken, TOKEN_ALPHABET } from "./api-key.ts";
import { generateSessionToken, isSessionToken } from "./session-token.ts";
import { timingSafeEqual, timingSafeEqualBytes } from "./constant-time.ts";

const fixed = (byte: number): RandomSource => ({ fill: (b) => b.fill(byte) });

describe("API keys", () => {
  it("generates svc_<env>_ + 48 URL-safe characters, its SHA-256 hash and its 12-character prefix", () => {
    const k = generateApiKey("live", cryptoRandom);
    expect(k.raw).toMatch(/^svc_live_[A-Za-z0-9_-]{48}$/);
    expect(k.prefix).toBe(k.raw.slice(0, 12));
    expect(k.hash).toBe(hashSecret(k.raw));
    expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(generateApiKey("test", cryptoRandom).raw.startsWith("svc_test_")).toBe(true);
  });

  it("hashSecret is SHA-256 of the UTF-8 bytes, hex (ASCII fast path and other text alike)", () => {
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashSecret("svc_test_" + "A".repeat(48))).toBe("ff7b86e7eb3747820af020e9dd1725c3b258dfa8661cd148f97166891e8e73ac");
    expect(hashSecret("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
    // The hasher is reused between calls: a call never sees the state of the one before.
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashSecret("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(hashSecret("x".repeat(200))).toBe(hashSecret("x".repeat(200)));
  });

  it("hashSecret agrees with Web Crypto's SHA-256 on any text (ASCII or not)", async () => {
    const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: "binary", maxLength: 80 })), async (text) => {
        expect(hashSecret(text)).toBe(hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
      }),
    );
  });

  it("draws tokens from the injected random source, uniformly over 64 symbols", () => {
    expect(randomToken(fixed(0))).toBe("A".repeat(48));
    expect(randomToken(fixed(63))).toBe("_".repeat(48));
    // 64 symbols, 6 bits each: byte & 63 maps 256 values onto 64 symbols exactly 4 times each (no bias).
    const counts = new Map<string, number>();
    for (let b = 0; b < 256; b++) {
      const c = randomToken(fixed(b), 1);
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(64);
    expect([...counts.values()].every((n) => n === 4)).toBe(true);
    expect(new Set(TOKEN_ALPHABET).size).toBe(64);
  });

  it("parses exactly the key format and nothing else", () => {
    const raw = generateApiKey("test", cryptoRandom).raw;
    expect(parseApiKey(raw)).toEqual({ environment: "test", token: raw.slice(9) });
    const bad = [
      "",
      "svc_live_",
      raw.slice(0, -1),
      raw + "A",
      raw.replace("svc_", "SVC_"),
      raw.replace("test", "prod"),
      "svc_live_" + "A".repeat(47) + "=",
      "svc_live_" + "A".repeat(47) + "é",
      " " + raw,
      raw + "\n",
      "Bearer " + raw,
    ];
    for (const b of bad) expect(parseApiKey(b)).toBeNull();
  });

  it("property: every generated key parses back to its environment; random strings almost never parse", () => {
    fc.assert(
      fc.property(fc.constantFrom("live" as const, "test" as const), fc.uint8Array({ minLength: 48, maxLength: 48 }), (env, bytes) => {
        let i = 0;
        const k = generateApiKey(env, { fill: (b) => (b.set(bytes.subarray(0, b.length)), i++, b) });
        return parseApiKey(k.raw)?.environment === env && keyDisplayPrefix(k.raw).length === 12;
      }),
    );
    fc.assert(fc.property(fc.string(), (s) => parseApiKey(s) === null || /^svc_(live|test)_[A-Za-z0-9_-]{48}$/.test(s)));
  });

  it("session tokens have their own format and are hashed the same way", () => {
    const t = generateSessionToken(cryptoRandom);
    expect(isSessionToken(t.raw)).toBe(true);
    expect(t.hash).toBe(hashSecret(t.raw));
    expect(isSessionToken(generateApiKey("live", cryptoRandom).raw)).toBe(false);
  });

  it("constant-time comparison answers like ===", () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => timingSafeEqual(a, b) === (a === b) && timingSafeEqual(a, a)));
    expect(timingSafeEqualBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(timingSafeEqualBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false);
  });
});
