/** API keys `svc_<live|test>_<48 URL-safe chars>`: generation, strict parsing, hashing for storage, display prefix. */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { RandomSource } from "../clock/clock.ts";

/** A key's environment. */
export type Environment = "live" | "test";

/** The URL-safe alphabet tokens are drawn from, uniformly. */
export const TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Length of the random token of keys and session tokens. */
export const TOKEN_LENGTH = 48;

/** Length of the display prefix: `svc_live_` plus three token characters. */
export const KEY_PREFIX_LENGTH = 12;

const KEY_PATTERN = /^svc_(live|test)_[A-Za-z0-9_-]{48}$/;

/** A freshly generated key: the raw text (shown once), its storage hash and its display prefix. */
export interface GeneratedKey {
  readonly raw: string;
  readonly hash: string;
  readonly prefix: string;
  readonly environment: Environment;
}

/** A parsed key. */
export interface ParsedKey {
  readonly environment: Environment;
  readonly token: string;
}

/** `length` (default 48) characters drawn uniformly from TOKEN_ALPHABET (64 symbols: 6 bits each, so no modulo bias). */
export function randomToken(random: RandomSource, length: number = TOKEN_LENGTH): string {
  const bytes = random.fill(new Uint8Array(length));
  let out = "";
  for (let i = 0; i < length; i++) out += TOKEN_ALPHABET[bytes[i]! & 63];
  return out;
}

/** Generates a new API key of an environment. */
export function generateApiKey(environment: Environment, random: RandomSource): GeneratedKey {
  const raw = `svc_${environment}_${randomToken(random)}`;
  return { raw, hash: hashSecret(raw), prefix: keyDisplayPrefix(raw), environment };
}

/** Parses a raw key strictly: exactly `svc_(live|test)_` and 48 URL-safe characters, or null. */
export function parseApiKey(raw: string): ParsedKey | null {
  if (raw.length !== 57 || !KEY_PATTERN.test(raw)) return null;
  return { environment: raw.charCodeAt(4) === 108 /* l */ ? "live" : "test", token: raw.slice(9) };
}

/** A function computing `hashSecret`'s digest (SHA-256 of the UTF-8 bytes, lowercase hex), e.g. a runtime's native one. */
export type SecretHasher = (raw: string) => string;

// One pristine SHA-256 state, copied into one reused hasher per call (noble's `_cloneInto`): a fresh
// instance allocates a buffer and a DataView over it, about a third of the cost of hashing a 57-byte key,
// which every data request now pays. The calls are synchronous, so no two ever share the hasher, and
// `digest()` wipes its buffer and state.
const PRISTINE = sha256.create();
const HASHER = sha256.create();

/** The SHA-256 hex digest under which a key or token is stored (the raw text never is). */
export function hashSecret(raw: string): string {
  const bytes = secretBytes(raw);
  PRISTINE._cloneInto(HASHER);
  const digest = HASHER.update(bytes).digest();
  // The copy of the secret is garbage from here on: leave zeros, not the secret, for the collector.
  bytes.fill(0);
  return bytesToHex(digest);
}

// The UTF-8 bytes of a secret. Keys and tokens are ASCII, whose bytes are its char codes: copying them
// skips a TextEncoder per call (about half the cost of hashing a key on every request, now that nothing
// remembers hashes of raw keys). Anything else goes through the encoder.
function secretBytes(raw: string): Uint8Array {
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c > 0x7f) return utf8ToBytes(raw);
    out[i] = c;
  }
  return out;
}

/** The key's display prefix: its first 12 characters. */
export function keyDisplayPrefix(raw: string): string {
  return raw.slice(0, KEY_PREFIX_LENGTH);
}
