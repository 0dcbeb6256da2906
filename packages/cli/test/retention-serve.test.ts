// `benchdata serve` runs the pruning worker beside the delivery and billing workers (issue 26): a database holding
// what retention no longer keeps is pruned shortly after start, on SQLite and PostgreSQL; /metrics and the log say
// what went, what is still needed stays, and SIGTERM stops the worker with the others.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStorage } from "@benchdata/storage-kysely";
import { http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";

const METRICS_TOKEN = "metrics-token-for-retention-serve-0123";
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), "benchdata-retention-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pgOn = await pgAvailable();

/** Old rows in every table pruning reads, through the store itself, with the wall clock's "now". */
async function seed(url: string): Promise<void> {
  const s = await openStorage(url, { clock: "app" });
  await s.migrate();
  const now = Date.now();
  const old = now - 45 * DAY;
  await s.createAccount({ id: "acc_old", name: "Old", tier: "growth", createdAt: old, limits: {}, allowedCidrs: [], billing: {} });
  await s.createWebhook({ id: "wh_old", accountId: "acc_old", url: "https://hooks.example.com/in", events: ["quota.warning"], secret: "whsec_x", createdAt: old }, 10);
  for (let i = 0; i < 3; i++) {
    await s.emitEvent({ id: `evt_old_${i}`, type: "quota.warning", accountId: "acc_old", createdAt: new Date(old).toISOString(), data: { calls_used: i, monthly_limit: 9, threshold: 8, period_start: "x", period_end: "y" } }, old + i);
  }
  for (const d of await s.claimDeliveries({ now: old + 10, leaseMs: 60_000, limit: 10, perWebhook: 10 })) {
    await s.completeDelivery({ deliveryId: d.deliveryId, leaseToken: d.leaseToken, attempt: { attempt: 1, at: old + 10, statusCode: 200, latencyMs: 1, error: null, responseBody: "ok" }, next: { status: "succeeded" } });
  }
  await s.createSession({ tokenHash: "expired-long-ago", accountId: "acc_old", createdAt: old, expiresAt: now - 10 * DAY });
  await s.createSession({ tokenHash: "live", accountId: "acc_old", createdAt: now, expiresAt: now + DAY });
  await s.close();
}

const targets: [string, () => Promise<{ url: string; env: Record<string, string>; done(): Promise<void> }>][] = [
  ["sqlite", async () => ({ url: `sqlite:${join(dir, "retention.db")}`, env: {}, done: async () => {} })],
];
if (pgOn) {
  targets.push([
    "postgres",
    async () => {
      const db = await tempDatabase("benchdata_retention");
      return { url: db.url, env: { BENCHDATA_WEBHOOK_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}` }, done: db.drop };
    },
  ]);
}

describe.each(targets)("benchdata serve prunes: %s", (_name, make) => {
  it("the pruning worker runs shortly after start: /metrics counts what it deleted, the log says it once, the live session stays; SIGTERM stops it cleanly", async () => {
    const target = await make();
    try {
      await seed(target.url);
      const server = await startServe(["--db", target.url], { ...target.env, BENCHDATA_METRICS_TOKEN: METRICS_TOKEN });
      let scrape = "";
      const deadline = Date.now() + 30_000;
      while (!scrape.includes('benchdata_retention_runs_total{outcome="succeeded"} 1') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        scrape = (await http(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      }
      expect(scrape).toContain('benchdata_retention_runs_total{outcome="succeeded"} 1');
      expect(scrape).toContain('benchdata_retention_pruned_rows_total{table="deliveries"} 3\n');
      expect(scrape).toContain('benchdata_retention_pruned_rows_total{table="delivery_attempts"} 3\n');
      expect(scrape).toContain('benchdata_retention_pruned_rows_total{table="events"} 3\n');
      expect(scrape).toContain('benchdata_retention_pruned_rows_total{table="sessions"} 1\n');
      expect(scrape).toMatch(/benchdata_retention_last_success_timestamp_seconds \d{10}/);
      expect(await server.stop("SIGTERM")).toBe(0);
      const pruned = server.logs.map((l) => (l.startsWith("{") ? JSON.parse(l) : {})).filter((e) => e.msg === "retention: pruned");
      expect(pruned).toHaveLength(1);
      expect(pruned[0]).toMatchObject({ level: "info", deliveries: 3, delivery_attempts: 3, events: 3, sessions: 1 });
      const after = await openStorage(target.url, { clock: "app" });
      expect(await after.findSession("live", Date.now())).toBe("acc_old");
      expect(await after.listDeliveries("acc_old", "wh_old", 10)).toEqual([]);
      await after.close();
    } finally {
      await target.done();
    }
  }, 60_000);
});
