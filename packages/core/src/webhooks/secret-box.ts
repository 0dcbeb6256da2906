/**
 * Webhook signing secrets at rest: sealed with AES-256-GCM (Web Crypto, so core runs unchanged on Node,
 * Bun, Deno and workers) under an operator key that is never stored in the database. A stored value reads
 * `aesgcm1:<key id>:<base64 IV>:<base64 ciphertext+tag>`; the key id says which operator key sealed it, so
 * the operator can add a new key, re-seal every row (`benchdata webhooks reseal`) and retire the old one.
 * The webhook's id is the additional authenticated data: a sealed secret copied onto another webhook's row
 * does not open.
 *
 * A value that is not sealed (a `whsec_…` written before encryption at rest) opens as itself, so an old
 * database keeps delivering until it is re-sealed (`serve` re-seals such rows when it starts).
 */
import { ulid } from "ulid";
import type { Clock, RandomSource } from "../clock/clock.ts";
import { fromBase64, toBase64 } from "../signing/signature.ts";
import type { WebhookStore } from "../storage/types.ts";

/** Seals and opens webhook signing secrets. */
export interface SecretBox {
  /** The key id new seals use; null for the plaintext box (tests and embedders that pass none). */
  readonly currentKeyId: string | null;
  /** The stored form of `secret` for webhook `webhookId`. */
  seal(webhookId: string, secret: string): Promise<string>;
  /** The secret a stored value holds; throws when it was sealed under a key this box lacks, or was tampered with. */
  open(webhookId: string, stored: string): Promise<string>;
  /** Whether `stored` is already sealed under the current key (nothing to re-seal). */
  isCurrent(stored: string): boolean;
  /** The ids of every key that opens (the current one first); empty for the plaintext box. */
  readonly keyIds: readonly string[];
}

/** One operator key: an id (letters, digits, `_`, `-`; at most 32) and 32 random bytes. */
export interface SecretKey {
  readonly id: string;
  readonly key: Uint8Array;
}

const PREFIX = "aesgcm1:";
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Whether a stored secret is sealed (rather than a plaintext `whsec_…` from before encryption at rest). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The key id a sealed value names, or null for a plaintext one. */
export function sealedKeyId(stored: string): string | null {
  if (!isSealed(stored)) return null;
  const end = stored.indexOf(":", PREFIX.length);
  return end < 0 ? null : stored.slice(PREFIX.length, end);
}

/** Stores secrets as given: for tests and embedders that keep no operator key. The CLI never uses it. */
export const plaintextSecretBox: SecretBox = {
  currentKeyId: null,
  async seal(_webhookId, secret) {
    return secret;
  },
  async open(_webhookId, stored) {
    if (isSealed(stored)) throw new Error(`this webhook's signing secret is sealed under operator key "${sealedKeyId(stored)}", and no operator key is configured`);
    return stored;
  },
  isCurrent(stored) {
    return !isSealed(stored);
  },
  keyIds: [],
};

/**
 * Parses operator keys written as `id:base64` entries separated by commas, spaces or new lines (the env
 * variable and key file format); the first is the current one, the others only open. Throws a readable error.
 */
export function parseSecretKeys(text: string): SecretKey[] {
  // A `#` starts a comment that runs to the end of its line.
  const entries = text
    .replace(/#[^\n]*/g, "")
    .split(/[\s,]+/)
    .filter((e) => e !== "");
  if (entries.length === 0) throw new Error("no operator key given (expected id:base64-of-32-bytes)");
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const colon = entry.indexOf(":");
    const id = colon < 0 ? "" : entry.slice(0, colon);
    if (!KEY_ID.test(id)) throw new Error(`operator key ${i + 1}: expected id:base64 with an id of letters, digits, _ or - (at most 32)`);
    if (seen.has(id)) throw new Error(`operator key id "${id}" appears twice`);
    seen.add(id);
    const key = fromBase64(entry.slice(colon + 1));
    if (key === null || key.length !== 32) throw new Error(`operator key "${id}": the key must be 32 bytes, base64-encoded`);
    return { id, key };
  });
}

const byte = new Uint8Array(1);

/**
 * A new operator key id: `k` and a ULID (27 characters). Unique, so a key generated after a restore can never
 * take the id of a lost one (ids derived from the date did: the old key then failed as "appears twice").
 */
export function newSecretKeyId(clock: Clock, random: RandomSource): string {
  return `k${ulid(clock.now(), () => random.fill(byte)[0]! / 256)}`;
}

/** A new operator key entry `id:base64` (32 random bytes), for a key file. */
export function generateSecretKeyEntry(random: RandomSource, id: string): string {
  if (!KEY_ID.test(id)) throw new Error(`invalid operator key id "${id}"`);
  return `${id}:${toBase64(random.fill(new Uint8Array(32)))}`;
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error("Web Crypto (crypto.subtle) is not available in this runtime");
  return s;
}

function aad(webhookId: string): Uint8Array {
  return encoder.encode(`benchdata webhook signing secret|${webhookId}`);
}

// Opened secrets, by stored value and webhook: a delivery opens its webhook's secret without a decryption.
const CACHE_LIMIT = 4096;

/** A box over operator keys; the first key seals, every key opens what it sealed. */
export async function createSecretBox(keys: readonly SecretKey[], random: RandomSource): Promise<SecretBox> {
  if (keys.length === 0) throw new Error("createSecretBox needs at least one operator key");
  const cryptoKeys = new Map<string, CryptoKey>();
  for (const k of keys) {
    if (!KEY_ID.test(k.id) || k.key.length !== 32) throw new Error(`invalid operator key "${k.id}"`);
    cryptoKeys.set(k.id, await subtle().importKey("raw", k.key as BufferSource, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
  }
  const current = keys[0]!.id;
  const currentKey = cryptoKeys.get(current)!;
  const opened = new Map<string, string>();

  return {
    currentKeyId: current,
    async seal(webhookId, secret) {
      const iv = random.fill(new Uint8Array(12));
      const ct = new Uint8Array(await subtle().encrypt({ name: "AES-GCM", iv: iv as BufferSource, additionalData: aad(webhookId) as BufferSource }, currentKey, encoder.encode(secret)));
      return `${PREFIX}${current}:${toBase64(iv)}:${toBase64(ct)}`;
    },
    async open(webhookId, stored) {
      if (!isSealed(stored)) return stored;
      const memo = `${webhookId}|${stored}`;
      const hit = opened.get(memo);
      if (hit !== undefined) return hit;
      const [keyId, ivText, ctText] = stored.slice(PREFIX.length).split(":");
      const key = keyId === undefined ? undefined : cryptoKeys.get(keyId);
      if (!key) throw new Error(`this webhook's signing secret is sealed under operator key "${keyId}", which is not configured`);
      const iv = fromBase64(ivText ?? "");
      const ct = fromBase64(ctText ?? "");
      if (iv === null || ct === null || iv.length !== 12) throw new Error("a sealed webhook signing secret is malformed");
      let plain: ArrayBuffer;
      try {
        plain = await subtle().decrypt({ name: "AES-GCM", iv: iv as BufferSource, additionalData: aad(webhookId) as BufferSource }, key, ct as BufferSource);
      } catch {
        throw new Error(`a sealed webhook signing secret does not open under operator key "${keyId}" (wrong key, another webhook's value, or altered)`);
      }
      const secret = decoder.decode(plain);
      if (opened.size >= CACHE_LIMIT) opened.delete(opened.keys().next().value!);
      opened.set(memo, secret);
      return secret;
    },
    isCurrent(stored) {
      return sealedKeyId(stored) === current;
    },
    keyIds: keys.map((k) => k.id),
  };
}

/**
 * The secret a rotation replaced, opened, while its overlap lasts at `at` (the attempt's time); null after it,
 * or when there is none. One that no longer opens is left out: the new secret alone still signs.
 */
export async function previousSecretAt(box: SecretBox, webhookId: string, stored: string | null | undefined, until: number | null | undefined, at: number): Promise<string | null> {
  if (stored == null || until == null || at >= until) return null;
  try {
    return await box.open(webhookId, stored);
  } catch {
    return null;
  }
}

/** A stored secret that does not open: which webhook, which field, and the key id it names. */
export interface UnopenedSecret {
  readonly webhookId: string;
  readonly accountId: string;
  readonly field: "current" | "previous";
  /** The stored value as read (sealed, so no secret): what a compare-and-set on the row expects. */
  readonly stored: string;
  /** The key id the sealed value names (null when it is malformed). */
  readonly keyId: string | null;
  /** `missing`: no configured key has that id; `mismatch`: a key with that id is configured but does not open it. */
  readonly reason: "missing" | "mismatch";
}

/** What a check of every stored secret found. */
export interface SecretCheck {
  /** Sealed values tried (plain-text ones open as themselves and are not counted). */
  readonly sealed: number;
  readonly failed: readonly UnopenedSecret[];
}

/**
 * Opens every sealed webhook secret, the current key's included: a key file replaced by another key under
 * the same id is found here, not at the first delivery. `box` null means no key at all (every sealed value fails).
 */
export async function checkWebhookSecrets(storage: Pick<WebhookStore, "listWebhookSecrets">, box: SecretBox | null): Promise<SecretCheck> {
  let sealed = 0;
  const failed: UnopenedSecret[] = [];
  for (const row of await storage.listWebhookSecrets()) {
    if (!isSealed(row.secret)) continue;
    sealed++;
    const keyId = sealedKeyId(row.secret);
    try {
      if (box === null) throw new Error("no operator key");
      await box.open(row.webhookId, row.secret);
    } catch {
      failed.push({
        webhookId: row.webhookId,
        accountId: row.accountId,
        field: row.field,
        stored: row.secret,
        keyId,
        reason: box !== null && keyId !== null && box.keyIds.includes(keyId) ? "mismatch" : "missing",
      });
    }
  }
  return { sealed, failed };
}

/** "3 need key id k1 (configured, but it does not open them); 1 needs key id k0 (not configured)": for messages. */
export function describeUnopened(failed: readonly UnopenedSecret[]): string {
  const byKey = new Map<string, { count: number; reason: UnopenedSecret["reason"] }>();
  for (const f of failed) {
    const id = f.keyId ?? "(malformed)";
    const entry = byKey.get(id) ?? { count: 0, reason: f.reason };
    entry.count++;
    byKey.set(id, entry);
  }
  return [...byKey]
    .map(([id, { count, reason }]) => `${count} ${count === 1 ? "needs" : "need"} key id ${id} (${reason === "missing" ? "not configured" : "a key with that id is configured, but it is a different key"})`)
    .join("; ");
}

/** What a re-seal did. */
export interface ResealReport {
  /** Secrets re-sealed under the current key. */
  readonly resealed: number;
  /** Secrets already under the current key. */
  readonly unchanged: number;
  /** Secrets that did not open (a key no longer configured, or another key under the same id) or changed meanwhile; left as they were. */
  readonly failed: number;
}

/** The storage a re-seal needs. */
export type ResealStorage = Pick<WebhookStore, "listWebhookSecrets" | "replaceWebhookSecret">;

/**
 * Re-seals webhook secrets under the box's current key: every one not already under it, or with
 * `onlyPlaintext` only those stored in plain text (what `serve` does when it starts, so instances still on
 * an older key list keep opening what they knew). Each row is replaced only if it still holds what was read.
 * A row already under the current key is opened too (unless `onlyPlaintext`): one that does not open counts
 * as failed, so a replaced key under a reused id is never reported as fine.
 */
export async function resealWebhookSecrets(storage: ResealStorage, box: SecretBox, options: { onlyPlaintext?: boolean } = {}): Promise<ResealReport> {
  if (box.currentKeyId === null) throw new Error("re-sealing needs an operator key");
  let resealed = 0;
  let unchanged = 0;
  let failed = 0;
  for (const row of await storage.listWebhookSecrets()) {
    if (options.onlyPlaintext && isSealed(row.secret)) {
      unchanged++;
      continue;
    }
    if (box.isCurrent(row.secret)) {
      try {
        await box.open(row.webhookId, row.secret);
        unchanged++;
      } catch {
        failed++;
      }
      continue;
    }
    try {
      const plain = await box.open(row.webhookId, row.secret);
      const to = await box.seal(row.webhookId, plain);
      if (await storage.replaceWebhookSecret({ webhookId: row.webhookId, field: row.field, from: row.secret, to })) resealed++;
      else failed++;
    } catch {
      failed++;
    }
  }
  return { resealed, unchanged, failed };
}
