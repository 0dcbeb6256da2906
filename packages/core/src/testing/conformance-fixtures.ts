/** Records and helpers the storage conformance suites share: a fixed time, ids, and records of each kind. */
import { afterAll, beforeAll, expect } from "vitest";
import { isId } from "../ids/new-id.ts";
import type { AccountRecord, AdmitInput, ApiKeyRecord, ClaimedDelivery, SnapshotRecord, Storage, WebhookRecord } from "../storage/types.ts";
import type { ConformanceTarget } from "./storage-conformance.ts";

/**
 * One store for the enclosing describe block's cases, made fresh for it and closed after them; `use` receives it.
 * Sharing is safe because each case writes its own accounts, keys and webhooks (new ids), and a case that reads
 * store-wide state (claims) first drains what earlier cases left; a store per case would cost a PostgreSQL
 * database each.
 */
export function storePerBlock(target: ConformanceTarget, use: (store: Storage) => void): void {
  let store: Storage | undefined;
  beforeAll(async () => {
    store = await target.create();
    use(store);
  });
  afterAll(async () => {
    if (store === undefined) return;
    await store.close();
    await target.destroy?.(store);
  });
}

/** 2026-11-16T12:00:00Z, the suites' "now". */
export const T0: number = Date.UTC(2026, 10, 16, 12, 0, 0);
let seq = 0;

/** A fresh `<prefix>_…` identifier, unique and time-ordered enough for tests (a ULID-shaped suffix). */
export function id(prefix: string): string {
  seq += 1;
  return `${prefix}_01JD${String(Date.now() % 1e9).padStart(9, "0")}${String(seq).padStart(13, "0")}`;
}

/** An account of tier growth created at T0. */
export function account(over: Partial<AccountRecord> = {}): AccountRecord {
  return { id: id("acc"), name: "Acme", tier: "growth", createdAt: T0, limits: {}, allowedCidrs: [], billing: {}, ...over };
}

/** An active live key of the account. */
export function key(accountId: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: id("key"),
    accountId,
    name: "server",
    environment: "live",
    scopes: ["benchmarks:read"],
    prefix: "svc_live_abc",
    isActive: true,
    createdAt: T0,
    rotatedAt: null,
    revokedAt: null,
    ...over,
  };
}

/** A webhook of the account subscribed to `events`. */
export function webhook(accountId: string, events: WebhookRecord["events"], over: Partial<WebhookRecord> = {}): WebhookRecord {
  return { id: id("wh"), accountId, url: "https://hooks.example.com/in", events, secret: "whsec_test", createdAt: T0, ...over };
}

/** An admission with generous limits and no quota (a test key's). */
export function admitInput(accountId: string, keyId: string, now: number, over: Partial<AdmitInput> = {}): AdmitInput {
  return { now, keyId, accountId, perMinute: 1000, perDay: 1_000_000, windowMs: 60_000, quota: null, ...over };
}

/** A live key's quota: 20 calls, blocks of 10 at 1000. */
export function quota(over: Partial<NonNullable<AdmitInput["quota"]>> = {}): NonNullable<AdmitInput["quota"]> {
  return {
    anchorDay: 1,
    baseQuota: 20,
    blockSize: 10,
    blockPrice: 1000,
    currency: "usd",
    retryAfterFailureMs: 3_600_000,
    maxAutoCharges: 10,
    warningEventId: id("evt"),
    invoiceId: id("inv"),
    heldEventId: id("evt"),
    ...over,
  };
}

/** Claims and succeeds every delivery due at `now`, until none is left; the deliveries, in claim order. */
export async function drainEvents(s: Storage, now: number): Promise<ClaimedDelivery[]> {
  const all: ClaimedDelivery[] = [];
  for (;;) {
    const got = await s.claimDeliveries({ now, leaseMs: 60_000, limit: 100, perWebhook: 100 });
    if (got.length === 0) return all;
    for (const d of got) {
      // The contract's identifiers are `<prefix>_<ULID>`, deliveries included.
      expect(isId("dlv", d.deliveryId), d.deliveryId).toBe(true);
      all.push(d);
      await s.completeDelivery({
        deliveryId: d.deliveryId,
        leaseToken: d.leaseToken,
        attempt: { attempt: d.attempt, at: now, statusCode: 200, latencyMs: 1, error: null, responseBody: "" },
        next: { status: "succeeded" },
      });
    }
  }
}

/** A live merchant snapshot of the account (m-1, 2026-Q2). */
export function snapshot(accountId: string, over: Partial<SnapshotRecord> = {}): SnapshotRecord {
  return {
    id: id("vcfs"),
    accountId,
    environment: "live",
    merchantId: "m-1",
    category: "saas",
    segment: "all",
    period: "2026-Q2",
    metrics: { gross_margin: 0.71, churn_rate: 0.031, customer_ltv: 12_345.67 },
    createdAt: T0,
    ...over,
  };
}

/** Runs `body` on a store of its own from `target`, closed and disposed of afterwards (for cases that read the whole store). */
export async function onFreshStore(target: ConformanceTarget, body: (s: Storage) => Promise<void>): Promise<void> {
  const s = await target.create();
  try {
    await body(s);
  } finally {
    await s.close();
    await target.destroy?.(s);
  }
}

/** Writes a `quota.warning` event for the account at `t` (its deliveries due then) and returns the event's id. */
export async function emitWarning(s: Storage, accountId: string, t: number, i: number): Promise<string> {
  const evId = id("evt");
  await s.emitEvent({ id: evId, type: "quota.warning", accountId, createdAt: new Date(t).toISOString(), data: { calls_used: i, monthly_limit: 20, threshold: 16, period_start: "x", period_end: "y" } }, t);
  return evId;
}

/** Ends a claimed delivery's attempt: a 200 that succeeded, or a 500 after which it is dead or waits for a retry. */
export function settle(s: Storage, d: ClaimedDelivery, at: number, next: { status: "succeeded" } | { status: "dead" } | { status: "pending"; at: number }): Promise<boolean> {
  const ok = next.status === "succeeded";
  return s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: d.attempt, at, statusCode: ok ? 200 : 500, latencyMs: 1, error: ok ? null : "http_status", responseBody: "" }, next });
}
