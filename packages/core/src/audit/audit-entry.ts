/**
 * Audit entries and their hash chain (docs/audit.md).
 *
 * Each entry's hash covers the previous entry's hash, so editing, removing or reordering any stored entry breaks
 * every hash from there on. What identifies a person (the client address, names, URLs, IP ranges, notes) is not
 * hashed itself: the hash covers a salted digest of it, so erasing an account can blank those fields (and the salt)
 * while every hash, and so the chain, still verifies. The salt is random per entry, so the digest left behind
 * cannot be tested against guessed addresses.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { RandomSource } from "../clock/clock.ts";
import type { Json } from "./canonical-json.ts";
import { canonicalJson } from "./canonical-json.ts";

/** What an audit entry records. */
export const AUDIT_ACTIONS = [
  "account.create",
  "account.update",
  "account.suspend",
  "account.resume",
  "account.export",
  "account.delete",
  "session.create",
  "session.sign_in",
  "session.sign_out",
  "session.end_all",
  "sign_in_link.create",
  "key.create",
  "key.rotate",
  "key.revoke",
  "webhook.create",
  "webhook.delete",
  "webhook.rotate_secret",
  "webhook.end_secret_overlap",
  "webhook.recover",
  "webhook.enable",
  "webhook.retry_delivery",
  "billing.retry",
  "billing.release",
] as const;

/** An audited action. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Whether `s` names an audited action. */
export function isAuditAction(s: string): s is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(s);
}

/** The previous hash of the first entry. */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

/** An entry as an action hands it to the store: everything but its place in the chain. */
export interface AuditDraft {
  /** `aud_<ULID>`. */
  readonly id: string;
  readonly at: number;
  /** Who: a console session's id (`ses_…`), `admin` (the admin token), `cli`, or `console` (an embedder's own console auth). */
  readonly actor: string;
  readonly action: AuditAction;
  /** The account acted on or in; null only where the store fills it in (a sign-in learns its account on redemption). */
  readonly accountId: string | null;
  /** The thing acted on (`key_…`, `wh_…`, `acc_…`, `inv_…`…), or null. */
  readonly targetId: string | null;
  readonly requestId: string | null;
  /** Identifying: erased with the account. */
  readonly clientAddress: string | null;
  /** The fields that changed and identify no one (tier, limits, scopes, status…). Never a secret. */
  readonly changes: Readonly<Record<string, Json>>;
  /** The fields that changed and may identify a person (names, URLs, IP ranges, notes): erased with the account. Never a secret. */
  readonly personal: Readonly<Record<string, Json>>;
  /** Random per entry (hex); salts `personalDigest`. Erased with the account. */
  readonly salt: string;
  /** SHA-256 of the salt, client address and personal fields (`auditPersonalDigest`): what the hash covers of them. */
  readonly personalDigest: string;
}

/** An entry as stored: the draft in its place in the chain. */
export interface AuditEntry extends Omit<AuditDraft, "accountId" | "salt" | "personal"> {
  readonly accountId: string | null;
  /** 1-based position in the chain. */
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  /** Null once erased. */
  readonly salt: string | null;
  /** Null once erased. */
  readonly personal: Readonly<Record<string, Json>> | null;
  /** When the account's erasure blanked the identifying fields, or null. */
  readonly erasedAt: number | null;
}

/** The chain's head: the last entry's position and hash (0 and the genesis hash when empty). */
export interface AuditHead {
  readonly seq: number;
  readonly hash: string;
}

const hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)));

/** The digest the hash covers in place of the identifying fields. */
export function auditPersonalDigest(salt: string, clientAddress: string | null, personal: Readonly<Record<string, Json>>): string {
  return hex(canonicalJson({ salt, client_address: clientAddress, personal }));
}

/** The hash of an entry at `seq` after `prevHash`: SHA-256 of the canonical JSON of every field but the identifying ones. */
export function auditEntryHash(e: Omit<AuditEntry, "hash" | "salt" | "personal" | "clientAddress" | "erasedAt">): string {
  return hex(
    canonicalJson({
      v: 1,
      seq: e.seq,
      prev: e.prevHash,
      id: e.id,
      at: e.at,
      actor: e.actor,
      action: e.action,
      account_id: e.accountId,
      target_id: e.targetId,
      request_id: e.requestId,
      changes: e.changes,
      personal_digest: e.personalDigest,
    }),
  );
}

/** What an action says about itself; `auditDraft` adds the salt and digest. */
export interface AuditFacts {
  readonly id: string;
  readonly at: number;
  readonly actor: string;
  readonly action: AuditAction;
  readonly accountId: string | null;
  readonly targetId?: string | null;
  readonly requestId?: string | null;
  readonly clientAddress?: string | null;
  /** Members left undefined (a field that did not change) are left out. */
  readonly changes?: Readonly<Record<string, Json | undefined>>;
  readonly personal?: Readonly<Record<string, Json | undefined>>;
}

/** `fields` without its undefined members. */
function defined(fields: Readonly<Record<string, Json | undefined>> | undefined): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(fields ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

/** A draft from an action's facts, with a fresh salt and the digest of its identifying fields. */
export function auditDraft(facts: AuditFacts, random: RandomSource): AuditDraft {
  const salt = bytesToHex(random.fill(new Uint8Array(16)));
  const clientAddress = facts.clientAddress ?? null;
  const personal = defined(facts.personal);
  return {
    id: facts.id,
    at: facts.at,
    actor: facts.actor,
    action: facts.action,
    accountId: facts.accountId,
    targetId: facts.targetId ?? null,
    requestId: facts.requestId ?? null,
    clientAddress,
    changes: defined(facts.changes),
    personal,
    salt,
    personalDigest: auditPersonalDigest(salt, clientAddress, personal),
  };
}

/** The draft placed after `head`: the entry a store writes (with `accountId` filled in when the draft left it null). */
export function chainAuditEntry(draft: AuditDraft, head: AuditHead, accountId: string | null = draft.accountId): AuditEntry {
  const base = {
    id: draft.id,
    at: draft.at,
    actor: draft.actor,
    action: draft.action,
    accountId,
    targetId: draft.targetId,
    requestId: draft.requestId,
    changes: draft.changes,
    personalDigest: draft.personalDigest,
    seq: head.seq + 1,
    prevHash: head.hash,
  };
  return { ...base, clientAddress: draft.clientAddress, personal: draft.personal, salt: draft.salt, erasedAt: null, hash: auditEntryHash(base) };
}

/** Why an entry breaks the chain. */
export type AuditBreak = "seq" | "prev_hash" | "hash" | "personal_digest" | "head";

/** The first break found: the entry, its position, and what is wrong. */
export interface AuditChainBreak {
  readonly id: string | null;
  readonly seq: number;
  readonly reason: AuditBreak;
  readonly detail: string;
}

/** Checks one entry against the one before it (null: the first); null when it holds. */
export function auditEntryBreak(entry: AuditEntry, prev: AuditHead): AuditChainBreak | null {
  const at = (reason: AuditBreak, detail: string): AuditChainBreak => ({ id: entry.id, seq: entry.seq, reason, detail });
  if (entry.seq !== prev.seq + 1) return at("seq", `expected position ${prev.seq + 1}, found ${entry.seq} (an entry is missing or out of place)`);
  if (entry.prevHash !== prev.hash) return at("prev_hash", "its previous hash is not the hash of the entry before it");
  if (entry.erasedAt === null) {
    if (entry.salt === null || entry.personal === null) return at("personal_digest", "identifying fields are missing but the entry is not marked erased");
    if (auditPersonalDigest(entry.salt, entry.clientAddress, entry.personal) !== entry.personalDigest) return at("personal_digest", "the client address or identifying fields were changed");
  }
  if (auditEntryHash(entry) !== entry.hash) return at("hash", "the entry's fields do not match its hash (it was edited)");
  return null;
}

/** What a walk of the chain found. */
export interface AuditVerification {
  readonly entries: number;
  readonly erased: number;
  readonly head: AuditHead;
  readonly break: AuditChainBreak | null;
}

/**
 * Walks the chain in `seq` order, page by page (`page(afterSeq)` returns the next entries, empty at the end), and
 * stops at the first break; finally the last entry must be the store's recorded head (so entries cut off the end
 * are found too). `progress` is told how many entries were checked so far.
 */
export async function verifyAuditChain(
  page: (afterSeq: number) => Promise<readonly AuditEntry[]>,
  head: AuditHead,
  progress: (checked: number) => void = () => {},
): Promise<AuditVerification> {
  let prev: AuditHead = { seq: 0, hash: AUDIT_GENESIS_HASH };
  let entries = 0;
  let erased = 0;
  for (;;) {
    const batch = await page(prev.seq);
    if (batch.length === 0) break;
    for (const e of batch) {
      const broken = auditEntryBreak(e, prev);
      if (broken) return { entries, erased, head: prev, break: broken };
      entries++;
      if (e.erasedAt !== null) erased++;
      prev = { seq: e.seq, hash: e.hash };
    }
    progress(entries);
  }
  if (prev.seq !== head.seq || prev.hash !== head.hash) {
    return {
      entries,
      erased,
      head: prev,
      break: { id: null, seq: prev.seq + 1, reason: "head", detail: `the chain ends at position ${prev.seq} but its recorded head is position ${head.seq} (entries were removed from the end, or the head was edited)` },
    };
  }
  return { entries, erased, head: prev, break: null };
}

/** An entry as the API and `benchdata audit export` show it (snake_case, ISO times); the salt only with `withSalt` (exports). */
export function auditEntryJson(e: AuditEntry, options: { readonly withSalt?: boolean } = {}): Record<string, Json> {
  return {
    id: e.id,
    seq: e.seq,
    at: new Date(e.at).toISOString(),
    actor: e.actor,
    action: e.action,
    account_id: e.accountId,
    target_id: e.targetId,
    request_id: e.requestId,
    client_address: e.clientAddress,
    changes: e.changes,
    personal: e.personal,
    erased_at: e.erasedAt === null ? null : new Date(e.erasedAt).toISOString(),
    personal_digest: e.personalDigest,
    prev_hash: e.prevHash,
    hash: e.hash,
    ...(options.withSalt === true ? { salt: e.salt } : {}),
  };
}
