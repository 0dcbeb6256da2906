import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cryptoRandom } from "../clock/clock.ts";
import type { AuditEntry, AuditHead } from "./audit-entry.ts";
import { AUDIT_GENESIS_HASH, auditDraft, chainAuditEntry, verifyAuditChain } from "./audit-entry.ts";
import type { Json } from "./canonical-json.ts";
import { canonicalJson } from "./canonical-json.ts";

const T0 = Date.UTC(2026, 10, 27);

function chainOf(n: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let head: AuditHead = { seq: 0, hash: AUDIT_GENESIS_HASH };
  for (let i = 0; i < n; i++) {
    const d = auditDraft(
      { id: `aud_${i}`, at: T0 + i, actor: i % 2 ? "admin" : "ses_abc", action: "key.create", accountId: "acc_1", targetId: `key_${i}`, requestId: `r${i}`, clientAddress: "198.51.100.4", changes: { scopes: ["benchmarks:read"] }, personal: { name: `key ${i}` } },
      cryptoRandom,
    );
    const e = chainAuditEntry(d, head);
    out.push(e);
    head = { seq: e.seq, hash: e.hash };
  }
  return out;
}

const verify = (entries: readonly AuditEntry[], head: AuditHead) =>
  verifyAuditChain(async (after) => entries.filter((e) => e.seq > after).slice(0, 3), head);

describe("canonical JSON", () => {
  it("gives the same text whatever order an object's keys come in", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null))), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed as Json)).toBe(canonicalJson(obj as Json));
        expect(JSON.parse(canonicalJson(obj as Json))).toEqual(obj);
      }),
    );
  });
  it("sorts keys, drops undefined members and refuses NaN", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"], c: undefined })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
  });
});

describe("audit chain", () => {
  it("a whole chain verifies, and so does one whose identifying fields were erased", async () => {
    const entries = chainOf(7);
    const head = { seq: 7, hash: entries[6]!.hash };
    expect((await verify(entries, head)).break).toBeNull();
    const erased = entries.map((e, i) => (i % 2 ? { ...e, clientAddress: null, personal: null, salt: null, erasedAt: T0 + 100 } : e));
    expect(await verify(erased, head)).toMatchObject({ entries: 7, erased: 3, break: null });
  });

  it("any edit of any entry is found at that entry (property)", async () => {
    const entries = chainOf(6);
    const head = { seq: 6, hash: entries[5]!.hash };
    const edits: ((e: AuditEntry) => AuditEntry)[] = [
      (e) => ({ ...e, action: "key.revoke" }),
      (e) => ({ ...e, actor: "admin2" }),
      (e) => ({ ...e, at: e.at + 1 }),
      (e) => ({ ...e, targetId: "key_other" }),
      (e) => ({ ...e, accountId: "acc_2" }),
      (e) => ({ ...e, requestId: "forged" }),
      (e) => ({ ...e, changes: { scopes: ["merchant:read"] } }),
      (e) => ({ ...e, clientAddress: "192.0.2.1" }),
      (e) => ({ ...e, personal: { name: "someone else" } }),
      (e) => ({ ...e, personalDigest: "0".repeat(64) }),
      (e) => ({ ...e, clientAddress: null, personal: null, salt: null }),
    ];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: edits.length - 1 }), async (at, which) => {
        const tampered = entries.map((e, i) => (i === at ? edits[which]!(e) : e));
        const r = await verify(tampered, head);
        expect(r.break).toMatchObject({ seq: at + 1, id: `aud_${at}` });
      }),
    );
  });

  it("a removed entry breaks the chain at the next one; entries cut off the end break it at the head", async () => {
    const entries = chainOf(5);
    const head = { seq: 5, hash: entries[4]!.hash };
    expect((await verify([...entries.slice(0, 2), ...entries.slice(3)], head)).break).toMatchObject({ seq: 4, reason: "seq" });
    expect((await verify(entries.slice(0, 4), head)).break).toMatchObject({ id: null, seq: 5, reason: "head" });
    // A re-hashed entry still breaks the one after it.
    const forged = { ...entries[1]!, action: "key.revoke" as const };
    const rehashed = chainAuditEntry({ ...forged, salt: forged.salt!, personal: forged.personal! }, { seq: 1, hash: entries[0]!.hash });
    expect((await verify([entries[0]!, rehashed, ...entries.slice(2)], head)).break).toMatchObject({ seq: 3, reason: "prev_hash" });
  });
});
