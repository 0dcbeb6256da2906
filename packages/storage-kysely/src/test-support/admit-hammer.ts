/**
 * A child process of the multi-process exactness test: opens the store named by argv (migrating it, as
 * every starting instance does), waits for the shared start time, then fires admits at two keys:
 * one limited by its per-minute window, one running into its quota. Prints a JSON summary on stdout.
 */
import { openStorage } from "../open-storage.ts";

/** What the parent asks a child to do. */
export interface HammerPlan {
  readonly url: string;
  readonly startAt: number;
  readonly accountId: string;
  readonly windowKeyId: string;
  readonly perMinute: number;
  readonly windowRequests: number;
  readonly quotaKeyId: string;
  readonly baseQuota: number;
  readonly quotaRequests: number;
  readonly concurrency: number;
  readonly worker: number;
}

/** What a child reports. */
export interface HammerReport {
  /** The driver the child opened the store with (SQLite's is the runtime's own). */
  readonly driver: string;
  readonly window: { allowed: number; limited: number };
  readonly quota: { allowed: number; exhausted: number; flipped: number; charges: string[]; warned: number };
}

async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

const plan = JSON.parse(process.argv[2]!) as HammerPlan;
const s = await openStorage(plan.url);
await s.migrate();
await new Promise((r) => setTimeout(r, Math.max(0, plan.startAt - Date.now())));

const windowResults = await pool(plan.windowRequests, plan.concurrency, () =>
  s.admit({ now: Date.now(), keyId: plan.windowKeyId, accountId: plan.accountId, perMinute: plan.perMinute, perDay: 1_000_000, windowMs: 60_000, quota: null }),
);
const quotaResults = await pool(plan.quotaRequests, plan.concurrency, (i) =>
  s.admit({
    now: Date.now(),
    keyId: plan.quotaKeyId,
    accountId: plan.accountId,
    perMinute: 1_000_000,
    perDay: 1_000_000,
    windowMs: 60_000,
    quota: {
      anchorDay: 1,
      baseQuota: plan.baseQuota,
      blockSize: 10,
      blockPrice: 500,
      currency: "usd",
      retryAfterFailureMs: 3_600_000,
      maxAutoCharges: 10,
      warningEventId: `evt_w${plan.worker}x${i}`,
      invoiceId: `inv_${plan.worker}x${i}`,
      heldEventId: `evt_h${plan.worker}x${i}`,
    },
  }),
);
await s.close();

const report: HammerReport = {
  driver: s.driver ?? s.kind,
  window: { allowed: windowResults.filter((r) => r.kind === "allowed").length, limited: windowResults.filter((r) => r.kind === "rate_limited").length },
  quota: {
    allowed: quotaResults.filter((r) => r.kind === "allowed").length,
    exhausted: quotaResults.filter((r) => r.kind === "quota_exhausted").length,
    flipped: quotaResults.filter((r) => r.kind === "quota_exhausted" && r.flipped).length,
    charges: quotaResults.flatMap((r) => (r.kind === "quota_exhausted" && r.chargeInvoiceId ? [r.chargeInvoiceId] : [])),
    warned: quotaResults.filter((r) => r.kind === "allowed" && r.quota?.warned !== null).length,
  },
};
process.stdout.write(JSON.stringify(report));
