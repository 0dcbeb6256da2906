import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AccountRecord, AdmitInput, ApiKeyRecord, Storage } from "@benchdata/core";
import { openStorage } from "../open-storage.ts";
import { openSqlite } from "./driver.ts";
import { createSqliteStorage } from "./sqlite-storage.ts";
import { BoundedMap } from "../bounded-map.ts";
import { admissionMemo } from "./admission-memo.ts";
import type { ChunkRows } from "./window-chunks.ts";
import { ChunkedWindow } from "./window-chunks.ts";

const dir = mkdtempSync(join(tmpdir(), "benchdata-memo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const T0 = Date.UTC(2026, 10, 24, 12);
const id = (prefix: string): string => `${prefix}_01JDMEMO${String(++n).padStart(18, "0")}`;

/** Two storages on one file: two connections, as two processes would have. */
async function twoConnections(): Promise<{ path: string; a: Storage; b: Storage; close(): Promise<void> }> {
  const path = join(dir, `memo-${++n}.db`);
  const a = await openStorage(`sqlite:${path}`, { clock: "app" });
  await a.migrate();
  const b = await openStorage(`sqlite:${path}`, { clock: "app" });
  return { path, a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
}

async function accountWithKey(s: Storage): Promise<{ account: AccountRecord; key: ApiKeyRecord; hash: string }> {
  const account: AccountRecord = { id: id("acc"), name: "Memo", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {} };
  await s.createAccount(account);
  const key: ApiKeyRecord = { id: id("key"), accountId: account.id, name: "k", environment: "test", scopes: ["benchmarks:read"], prefix: "svc_test_abc", isActive: true, createdAt: T0, rotatedAt: null, revokedAt: null };
  const hash = `hash-${key.id}`;
  expect(await s.createKey({ key, hash, maxKeys: 10, eventId: id("evt") })).toBe("created");
  return { account, key, hash };
}

/** An admission of a fresh key with its lookup remembered (`expect`), already admitted once, so its expectation is remembered too. */
async function rememberedAdmission(s: Storage): Promise<{ who: Awaited<ReturnType<typeof accountWithKey>>; input: AdmitInput }> {
  const who = await accountWithKey(s);
  const lookup = await s.findKeyByHash(who.hash);
  const input: AdmitInput = { now: T0, keyId: who.key.id, accountId: who.account.id, perMinute: 100, perDay: 1000, windowMs: 60_000, quota: null, expect: { keyHash: who.hash, version: lookup!.version } };
  expect((await s.admit(input)).kind).toBe("allowed");
  return { who, input };
}

async function admitAs(s: Storage, who: { account: AccountRecord; key: ApiKeyRecord; hash: string }, at: number, limits: { perMinute: number; perDay: number }): Promise<string> {
  const lookup = await s.findKeyByHash(who.hash);
  const input: AdmitInput = {
    now: at,
    keyId: who.key.id,
    accountId: who.account.id,
    perMinute: limits.perMinute,
    perDay: limits.perDay,
    windowMs: 60_000,
    quota: null,
    expect: { keyHash: who.hash, version: lookup?.version ?? 0 },
  };
  return (await s.admit(input)).kind;
}

describe("sqlite admissions remember what they wrote only while nothing else writes", () => {
  it("exactness across connections: admissions through another connection count at this one's next admission", async () => {
    const { a, b, close } = await twoConnections();
    try {
      const who = await accountWithKey(a);
      const limits = { perMinute: 5, perDay: 1000 };
      const kinds: string[] = [];
      // Interleaved, so each connection's remembered window goes stale between its own admissions.
      for (const [i, s] of [a, a, b, a, b, a, b].entries()) kinds.push(await admitAs(s, who, T0 + i, limits));
      expect(kinds).toEqual(["allowed", "allowed", "allowed", "allowed", "allowed", "rate_limited", "rate_limited"]);
    } finally {
      await close();
    }
  });

  it("the day counter: a change made by hand in another connection counts at the next admission", async () => {
    const { path, a, close } = await twoConnections();
    try {
      const who = await accountWithKey(a);
      const limits = { perMinute: 100, perDay: 5 };
      expect(await admitAs(a, who, T0, limits)).toBe("allowed");
      expect(await admitAs(a, who, T0 + 1, limits)).toBe("allowed");
      const operator = await openSqlite(path);
      operator.prepare("UPDATE day_counters SET count = 5 WHERE account_id = ?").run(who.account.id);
      operator.close();
      expect(await admitAs(a, who, T0 + 2, limits)).toBe("rate_limited");
    } finally {
      await close();
    }
  });

  it("rotation through another connection: the old key's remembered lookup is stale at the very next admission", async () => {
    const { a, b, close } = await twoConnections();
    try {
      const { who, input } = await rememberedAdmission(a);
      expect((await a.admit({ ...input, now: T0 + 1 })).kind).toBe("allowed");
      await b.rotateKey({ accountId: who.account.id, keyId: who.key.id, newHash: "hash-rotated", newPrefix: "svc_test_xyz", now: T0 + 2, eventId: id("evt") });
      expect((await a.admit({ ...input, now: T0 + 3 })).kind).toBe("stale");
    } finally {
      await close();
    }
  });

  it("revocation through the same connection: seen at the next admission (its own writes move total_changes)", async () => {
    const { a, close } = await twoConnections();
    try {
      const { who, input } = await rememberedAdmission(a);
      await a.revokeKey({ accountId: who.account.id, keyId: who.key.id, now: T0 + 1, eventId: id("evt") });
      expect((await a.admit({ ...input, now: T0 + 2 })).kind).toBe("stale");
    } finally {
      await close();
    }
  });

  it("an account update through the same connection moves its version: the old expectation is stale", async () => {
    const { a, close } = await twoConnections();
    try {
      const { who, input } = await rememberedAdmission(a);
      await a.updateAccount(who.account.id, { allowedCidrs: ["10.0.0.0/8"] });
      expect((await a.admit({ ...input, now: T0 + 1 })).kind).toBe("stale");
    } finally {
      await close();
    }
  });
});

describe("sqlite admissions when the memo is full", () => {
  it("a day counter dropped from the memo mid-batch keeps the batch's increments (the daily limit stays exact)", async () => {
    const path = join(dir, `memo-${++n}.db`);
    const s = await openStorage(`sqlite:${path}`, { clock: "app" });
    const db = await openSqlite(path);
    const small = createSqliteStorage(db, { clock: "app", admissionMemoSize: 1 });
    try {
      await s.migrate();
      const at = (accountId: string, keyId: string): AdmitInput => ({ now: T0, keyId, accountId, perMinute: 1000, perDay: 2, windowMs: 60_000, quota: null });
      expect((await small.admit(at("acc_hot", "key_hot"))).kind).toBe("allowed");
      // One batch: the hot account (its second admission), another account (which drops the hot one from a
      // memo of one), the hot account again (its third: over its daily 2).
      const kinds = (await Promise.all([small.admit(at("acc_hot", "key_hot")), small.admit(at("acc_other", "key_other")), small.admit(at("acc_hot", "key_hot2"))])).map((r) => r.kind);
      expect(kinds).toEqual(["allowed", "allowed", "rate_limited"]);
      const peek = await s.peekLimits({ now: T0, keyId: "key_hot", accountId: "acc_hot", perMinute: 1000, perDay: 2, windowMs: 60_000 });
      expect(peek.day.remaining).toBe(0);
    } finally {
      await small.close();
      await s.close();
    }
  });
});

describe("admissionMemo", () => {
  const mark = (dataVersion: number, totalChanges: number) => ({ dataVersion, totalChanges });

  it("keeps what it remembers only when a batch begins where the last one ended", () => {
    const memo = admissionMemo(10);
    memo.begin(mark(1, 0));
    memo.windows.set("key_a", ChunkedWindow.load({ readKey: () => undefined } as unknown as ChunkRows, "key_a", 4));
    memo.end(mark(1, 3));
    memo.begin(mark(1, 3));
    expect(memo.windows.has("key_a")).toBe(true);
    memo.end(mark(1, 4));
    memo.begin(mark(2, 4)); // another connection committed
    expect(memo.windows.size).toBe(0);
    memo.days.set("acc_a", { day: 1, count: 1 });
    memo.end(mark(2, 5));
    memo.begin(mark(2, 6)); // this connection wrote outside admission
    expect(memo.days.size).toBe(0);
  });

  it("a batch that never ended (it threw) leaves nothing to trust", () => {
    const memo = admissionMemo(10);
    memo.begin(mark(1, 0));
    memo.end(mark(1, 1));
    memo.begin(mark(1, 1));
    memo.expectations.set("h", { keyId: "k", accountId: "a", version: 0 });
    memo.begin(mark(1, 1));
    expect(memo.expectations.size).toBe(0);
  });

  it("BoundedMap drops the oldest entry rather than grow past its capacity", () => {
    const m = new BoundedMap<number>(2);
    m.set("a", 1).set("b", 2).set("a", 3).set("c", 4);
    expect([...m.keys()]).toEqual(["b", "c"]);
  });
});
