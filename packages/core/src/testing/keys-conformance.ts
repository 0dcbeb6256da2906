/** Storage conformance, aPI keys (`KeyStore`), and the guarded creation of keys and webhooks under concurrency. */
import { describe, expect, it } from "vitest";
import type { Storage } from "../storage/types.ts";
import { account, drainEvents, id, key, storePerBlock, T0, webhook } from "./conformance-fixtures.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/** Registers these cases for one implementation under `name`. */
export function keysConformance(name: string, target: ConformanceTarget): void {
  describe(`storage conformance: ${name}`, () => {
    describe("keys", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("creates a key, finds it by hash with its account, and writes key.created", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.created", "key.rotated", "key.revoked"]), 10);
        const k = key(a.id, { scopes: ["benchmarks:read", "segments:read"], environment: "test" });
        expect(await s.createKey({ key: k, hash: `hash-${k.id}`, maxKeys: 5, eventId: id("evt") })).toBe("created");
        const found = await s.findKeyByHash(`hash-${k.id}`);
        expect(found?.key).toEqual(k);
        expect(found?.account).toEqual({ ...a, status: "active", suspendedAt: null, suspendedReason: null });
        expect(found?.retired).toBe(false);
        expect(await s.findKeyByHash("nope")).toBeNull();
        expect(await s.getKey(a.id, k.id)).toEqual(k);
        expect(await s.getKey("acc_other", k.id)).toBeNull();
        expect((await s.listKeys(a.id)).map((x) => x.id)).toEqual([k.id]);
        const ev = await drainEvents(s, T0);
        expect(ev).toHaveLength(1);
        const body = JSON.parse(ev[0]!.body);
        expect(body).toMatchObject({ type: "key.created", account_id: a.id, data: { key_id: k.id, key_name: "server", environment: "test", scopes: ["benchmarks:read", "segments:read"] } });
      });

      it("refuses a key beyond maxKeys, and revoked keys do not count", async () => {
        const a = account();
        await s.createAccount(a);
        const k1 = key(a.id);
        const k2 = key(a.id);
        expect(await s.createKey({ key: k1, hash: `h-${k1.id}`, maxKeys: 1, eventId: id("evt") })).toBe("created");
        expect(await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 1, eventId: id("evt") })).toBe("limit");
        expect(await s.findKeyByHash(`h-${k2.id}`)).toBeNull();
        await s.revokeKey({ accountId: a.id, keyId: k1.id, now: T0, eventId: id("evt") });
        expect(await s.createKey({ key: k2, hash: `h-${k2.id}`, maxKeys: 1, eventId: id("evt") })).toBe("created");
      });

      it("rotation: the old hash is retired at once, the new one works, key.rotated is written", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.rotated"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `old-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const r = await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `new-${k.id}`, newPrefix: "svc_live_xyz", now: T0 + 5, eventId: id("evt") });
        expect(r).toMatchObject({ id: k.id, prefix: "svc_live_xyz", rotatedAt: T0 + 5, isActive: true });
        expect((await s.findKeyByHash(`old-${k.id}`))?.retired).toBe(true);
        const fresh = await s.findKeyByHash(`new-${k.id}`);
        expect(fresh?.retired).toBe(false);
        expect(fresh?.key.prefix).toBe("svc_live_xyz");
        expect(await s.rotateKey({ accountId: "acc_other", keyId: k.id, newHash: "x", newPrefix: "x", now: T0, eventId: id("evt") })).toBeNull();
        const ev = await drainEvents(s, T0 + 10);
        expect(ev.map((d) => JSON.parse(d.body).type)).toEqual(["key.rotated"]);
        expect(JSON.parse(ev[0]!.body).data).toEqual({ key_id: k.id, key_name: "server", rotated_at: new Date(T0 + 5).toISOString() });
      });

      it("revocation is permanent, writes key.revoked once, and a revoked key cannot be rotated", async () => {
        const a = account();
        await s.createAccount(a);
        await s.createWebhook(webhook(a.id, ["key.revoked"]), 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const r = await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 7, eventId: id("evt") });
        expect(r).toMatchObject({ isActive: false, revokedAt: T0 + 7 });
        expect(await s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 8, eventId: id("evt") })).toMatchObject({ revokedAt: T0 + 7 });
        expect((await s.findKeyByHash(`h-${k.id}`))?.key.isActive).toBe(false);
        expect(await s.rotateKey({ accountId: a.id, keyId: k.id, newHash: "n", newPrefix: "p", now: T0, eventId: id("evt") })).toBeNull();
        expect(await s.revokeKey({ accountId: "acc_other", keyId: k.id, now: T0, eventId: id("evt") })).toBeNull();
        const ev = await drainEvents(s, T0 + 10);
        expect(ev.map((d) => JSON.parse(d.body).type)).toEqual(["key.revoked"]);
      });
    });

    describe("keys and webhooks: guarded under concurrency", () => {
      let s!: Storage;
      storePerBlock(target, (store) => (s = store));

      it("createKey never exceeds maxKeys when creations race; refused keys leave nothing behind", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.created"]);
        await s.createWebhook(w, 10);
        const ks = Array.from({ length: 12 }, () => key(a.id));
        const results = await Promise.all(ks.map((k) => s.createKey({ key: k, hash: `race-${k.id}`, maxKeys: 3, eventId: id("evt") })));
        expect(results.filter((r) => r === "created")).toHaveLength(3);
        expect(results.filter((r) => r === "limit")).toHaveLength(9);
        expect(await s.listKeys(a.id)).toHaveLength(3);
        for (const [i, k] of ks.entries()) expect((await s.findKeyByHash(`race-${k.id}`)) !== null).toBe(results[i] === "created");
        expect((await s.usage(a.id, T0, 1, 20, 10)).activeKeys).toBe(3);
        expect((await drainEvents(s, T0)).filter((d) => d.webhookId === w.id)).toHaveLength(3);
      });

      it("createWebhook never exceeds maxWebhooks when creations race", async () => {
        const a = account();
        await s.createAccount(a);
        const results = await Promise.all(Array.from({ length: 12 }, () => s.createWebhook(webhook(a.id, ["key.created"]), 2)));
        expect(results.filter((r) => r === "created")).toHaveLength(2);
        expect(await s.listWebhooks(a.id)).toHaveLength(2);
      });

      it("racing revocations write key.revoked once and all report the first revocation time", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.revoked"]);
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `h-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.revokeKey({ accountId: a.id, keyId: k.id, now: T0 + 1 + i, eventId: id("evt") })));
        const times = new Set(results.map((r) => r?.revokedAt));
        expect(times.size).toBe(1);
        expect(results.every((r) => r !== null && r.isActive === false)).toBe(true);
        expect((await s.usage(a.id, T0 + 10, 1, 20, 10)).activeKeys).toBe(0);
        expect((await drainEvents(s, T0 + 10)).filter((d) => d.webhookId === w.id)).toHaveLength(1);
      });

      it("racing rotations leave exactly one working hash, the key shows that rotation's prefix, one key.rotated each", async () => {
        const a = account();
        await s.createAccount(a);
        const w = webhook(a.id, ["key.rotated"]);
        await s.createWebhook(w, 10);
        const k = key(a.id);
        await s.createKey({ key: k, hash: `old-${k.id}`, maxKeys: 5, eventId: id("evt") });
        const n = 6;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => s.rotateKey({ accountId: a.id, keyId: k.id, newHash: `new${i}-${k.id}`, newPrefix: `svc_live_r${i}${i}`, now: T0 + 5, eventId: id("evt") })),
        );
        const rotated = results.flatMap((r, i) => (r === null ? [] : [i]));
        expect(rotated.length).toBeGreaterThan(0);
        expect((await s.findKeyByHash(`old-${k.id}`))?.retired).toBe(true);
        const working: number[] = [];
        for (let i = 0; i < n; i++) {
          const found = await s.findKeyByHash(`new${i}-${k.id}`);
          // A rotation that reported failure must not have installed its hash.
          if (!rotated.includes(i)) expect(found).toBeNull();
          else if (found && !found.retired) working.push(i);
        }
        expect(working).toHaveLength(1);
        expect((await s.getKey(a.id, k.id))?.prefix).toBe(`svc_live_r${working[0]}${working[0]}`);
        expect((await drainEvents(s, T0 + 10)).filter((d) => d.webhookId === w.id)).toHaveLength(rotated.length);
      });
    });
  });
}
