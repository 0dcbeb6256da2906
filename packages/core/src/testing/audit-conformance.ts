/**
 * The conformance cases of the audit log, each on a fresh store (the chain is the whole store's): appends chain,
 * only a change leaves an entry, concurrent appends never fork the chain, and an erasure blanks what identifies a
 * person while the chain still verifies.
 */
import { describe, expect, it } from "vitest";
import type { AuditAction, AuditDraft } from "../audit/audit-entry.ts";
import { auditDraft, verifyAuditChain } from "../audit/audit-entry.ts";
import { cryptoRandom } from "../clock/clock.ts";
import type { Storage } from "../storage/types.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";
import { account, id, key, onFreshStore, T0, webhook } from "./conformance-fixtures.ts";

/** A draft of `action` on `accountId` from 203.0.113.7, naming a person in its personal fields. */
function draft(action: AuditAction, accountId: string | null, over: { at?: number; actor?: string; targetId?: string } = {}): AuditDraft {
  return auditDraft(
    {
      id: id("aud"),
      at: over.at ?? T0,
      actor: over.actor ?? "admin",
      action,
      accountId,
      targetId: over.targetId ?? null,
      requestId: "req-1",
      clientAddress: "203.0.113.7",
      changes: { tier: { from: "startup", to: "growth" } },
      personal: { name: "Jane Doe's laptop" },
    },
    cryptoRandom,
  );
}

/** Every entry, oldest first, and whether the chain verifies. */
async function chain(s: Storage): Promise<{ actions: string[]; ok: boolean; entries: number }> {
  const all = await s.listAudit({ order: "asc", limit: 10_000 });
  const v = await verifyAuditChain((after) => s.listAudit({ order: "asc", afterSeq: after, limit: 50 }), await s.auditHead());
  return { actions: all.map((e) => e.action), ok: v.break === null, entries: v.entries };
}

/** The audit cases of the conformance suite. */
export function auditConformance(name: string, target: ConformanceTarget): void {
  const withStore = (body: (s: Storage) => Promise<void>): Promise<void> => onFreshStore(target, body);

  describe(`audit log conformance: ${name}`, () => {
    it("appends chain in order from position 1, the head follows, and the chain verifies", () =>
      withStore(async (s) => {
        expect(await s.auditHead()).toEqual({ seq: 0, hash: "0".repeat(64) });
        const a = account();
        await s.createAccount(a, draft("account.create", a.id, { targetId: a.id }));
        const e2 = await s.appendAudit(draft("account.export", a.id, { at: T0 + 1 }));
        const listed = await s.listAudit({ order: "asc", limit: 10 });
        expect(listed.map((e) => e.seq)).toEqual([1, 2]);
        expect(listed[1]!.prevHash).toBe(listed[0]!.hash);
        expect(listed[0]!).toMatchObject({ action: "account.create", accountId: a.id, targetId: a.id, actor: "admin", clientAddress: "203.0.113.7", requestId: "req-1", erasedAt: null });
        expect(listed[0]!.changes).toEqual({ tier: { from: "startup", to: "growth" } });
        expect(listed[0]!.personal).toEqual({ name: "Jane Doe's laptop" });
        expect(e2.seq).toBe(2);
        expect(await s.auditHead()).toEqual({ seq: 2, hash: e2.hash });
        expect(await chain(s)).toEqual({ actions: ["account.create", "account.export"], ok: true, entries: 2 });
      }));

    it("an action that changes nothing, or fails, leaves no entry; one that changes leaves exactly one", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        const k = key(a.id);
        expect(await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 1, eventId: id("evt"), audit: draft("key.create", a.id, { targetId: k.id }) })).toBe("created");
        const over = key(a.id);
        expect(await s.createKey({ key: over, hash: `h-${over.id}`, maxKeys: 1, eventId: id("evt"), audit: draft("key.create", a.id) })).toBe("limit");
        expect(await s.revokeKey({ accountId: a.id, keyId: "key_unknown", now: T0, eventId: id("evt"), audit: draft("key.revoke", a.id) })).toBeNull();
        await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 1, eventId: id("evt"), audit: draft("key.revoke", a.id, { targetId: k.id }) });
        await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 2, eventId: id("evt"), audit: draft("key.revoke", a.id, { targetId: k.id }) });
        expect(await s.setAccountStatus({ accountId: a.id, status: "active", now: T0, eventId: id("evt"), audit: draft("account.resume", a.id) })).toMatchObject({ changed: false });
        expect(await s.deleteWebhook(a.id, "wh_unknown", draft("webhook.delete", a.id))).toBe(false);
        expect(await s.deleteSession("no-such-hash", draft("session.sign_out", a.id))).toBe(false);
        expect(await s.updateAccount("acc_unknown", { tier: "growth" }, draft("account.update", "acc_unknown"))).toBeNull();
        expect(await chain(s)).toEqual({ actions: ["key.create", "key.revoke"], ok: true, entries: 2 });
      }));

    it("a compare-and-set that finds another value (a guarded delete, an overlap's end) records nothing; one that holds records one entry", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        const gone = webhook(a.id, ["key.created"], { secret: "sealed-gone" });
        const kept = webhook(a.id, ["key.created"], { secret: "sealed-one" });
        for (const w of [gone, kept]) await s.createWebhook(w, 10);
        await s.rotateWebhookSecret({ accountId: a.id, webhookId: kept.id, secret: "sealed-two", previousUntil: T0 + 1000 });
        expect(await s.deleteWebhook(a.id, gone.id, draft("webhook.delete", a.id, { targetId: gone.id, actor: "cli" }), "stale")).toBe(false);
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: kept.id, previous: "stale", audit: draft("webhook.end_secret_overlap", a.id, { targetId: kept.id, actor: "cli" }) })).toBe(false);
        expect(await chain(s)).toEqual({ actions: [], ok: true, entries: 0 });
        expect(await s.deleteWebhook(a.id, gone.id, draft("webhook.delete", a.id, { targetId: gone.id, actor: "cli" }), "sealed-gone")).toBe(true);
        expect(await s.endWebhookSecretOverlap({ accountId: a.id, webhookId: kept.id, previous: "sealed-one", audit: draft("webhook.end_secret_overlap", a.id, { targetId: kept.id, actor: "cli" }) })).toBe(true);
        const entries = await s.listAudit({ order: "asc", limit: 10 });
        expect(entries.map((e) => [e.action, e.actor, e.accountId, e.targetId])).toEqual([
          ["webhook.delete", "cli", a.id, gone.id],
          ["webhook.end_secret_overlap", "cli", a.id, kept.id],
        ]);
        expect((await chain(s)).ok).toBe(true);
      }));

    it("a sign-in's entry takes the redeemed link's account; a sign-out's the ended session's", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        await s.createSignInLink({ tokenHash: "link-1", accountId: a.id, createdAt: T0, expiresAt: T0 + 60_000 });
        const session = { tokenHash: "sess-1", createdAt: T0, expiresAt: T0 + 60_000 };
        expect(await s.redeemSignInLink({ linkHash: "link-1", now: T0, session, audit: draft("session.sign_in", null) })).toBe(a.id);
        expect(await s.redeemSignInLink({ linkHash: "link-1", now: T0, session: { ...session, tokenHash: "sess-2" }, audit: draft("session.sign_in", null) })).toBeNull();
        expect(await s.deleteSession("sess-1", draft("session.sign_out", null))).toBe(true);
        const entries = await s.listAudit({ order: "asc", limit: 10 });
        expect(entries.map((e) => [e.action, e.accountId])).toEqual([
          ["session.sign_in", a.id],
          ["session.sign_out", a.id],
        ]);
        expect((await chain(s)).ok).toBe(true);
      }));

    it("concurrent appends never fork the chain: every position once, in one verifying chain", () =>
      withStore(async (s) => {
        const a = account();
        await s.createAccount(a);
        const hooks = Array.from({ length: 8 }, () => webhook(a.id, ["key.created"]));
        await Promise.all([
          ...Array.from({ length: 12 }, (_, i) => s.appendAudit(draft("account.export", a.id, { at: T0 + i }))),
          ...hooks.map((w) => s.createWebhook(w, 100, draft("webhook.create", a.id, { targetId: w.id }))),
        ]);
        const entries = await s.listAudit({ order: "asc", limit: 100 });
        expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(new Set(entries.map((e) => e.prevHash)).size).toBe(20);
        expect(await chain(s)).toMatchObject({ ok: true, entries: 20 });
      }));

    it("lists newest first by cursor, filtered by account, actor, action and time", () =>
      withStore(async (s) => {
        const a = account();
        const b = account();
        await s.createAccount(a);
        await s.createAccount(b);
        for (let i = 0; i < 5; i++) await s.appendAudit(draft("account.export", a.id, { at: T0 + i, actor: i % 2 === 0 ? "admin" : "cli" }));
        await s.appendAudit(draft("account.suspend", b.id, { at: T0 + 10 }));
        const page1 = await s.listAudit({ order: "desc", accountId: a.id, limit: 2 });
        expect(page1.map((e) => e.at)).toEqual([T0 + 4, T0 + 3]);
        const page2 = await s.listAudit({ order: "desc", accountId: a.id, beforeSeq: page1[1]!.seq, limit: 10 });
        expect(page2.map((e) => e.at)).toEqual([T0 + 2, T0 + 1, T0]);
        expect((await s.listAudit({ order: "desc", actor: "cli", limit: 10 })).map((e) => e.at)).toEqual([T0 + 3, T0 + 1]);
        expect((await s.listAudit({ order: "desc", action: "account.suspend", limit: 10 })).map((e) => e.accountId)).toEqual([b.id]);
        expect((await s.listAudit({ order: "asc", from: T0 + 1, to: T0 + 3, limit: 10 })).map((e) => e.at)).toEqual([T0 + 1, T0 + 2]);
      }));

    it("an erasure blanks the account's identifying fields, keeps what happened, appends its own entry, and the chain still verifies", () =>
      withStore(async (s) => {
        const a = account();
        const b = account();
        await s.createAccount(a, draft("account.create", a.id, { targetId: a.id }));
        await s.createAccount(b, draft("account.create", b.id, { targetId: b.id }));
        await s.updateAccount(a.id, { tier: "startup" }, draft("account.update", a.id, { targetId: a.id }));
        const r = await s.deleteAccount({ accountId: a.id, now: T0 + 5, audit: draft("account.delete", a.id, { targetId: a.id, at: T0 + 5 }) });
        expect(r?.erased).toBe(true);
        // A second erasure changes nothing and records nothing.
        await s.deleteAccount({ accountId: a.id, now: T0 + 6, audit: draft("account.delete", a.id, { targetId: a.id, at: T0 + 6 }) });
        const entries = await s.listAudit({ order: "asc", limit: 10 });
        expect(entries.map((e) => [e.action, e.accountId])).toEqual([
          ["account.create", a.id],
          ["account.create", b.id],
          ["account.update", a.id],
          ["account.delete", a.id],
        ]);
        for (const e of entries.slice(0, 3).filter((x) => x.accountId === a.id)) {
          expect(e).toMatchObject({ clientAddress: null, personal: null, salt: null, erasedAt: T0 + 5, actor: "admin", requestId: "req-1" });
          expect(e.changes).toEqual({ tier: { from: "startup", to: "growth" } });
        }
        expect(entries[1]).toMatchObject({ clientAddress: "203.0.113.7", personal: { name: "Jane Doe's laptop" }, erasedAt: null });
        expect(entries[3]).toMatchObject({ erasedAt: null, clientAddress: "203.0.113.7" });
        expect(await chain(s)).toMatchObject({ ok: true, entries: 4 });
      }));
  });
}
