// Several real `benchdata serve` processes on one PostgreSQL database, with app clocks skewed by ±2 minutes:
// limits, quota, rotation and usage stay exact across them because the database decides, on its own clock.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Instance } from "./helpers.ts";
import { cli, http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";

const hasPg = await pgAvailable();
const ADMIN = "cluster-admin-token-0123456789abcdefghij";
const LIVE = { host: "api.localhost" };
const TEST = { host: "sandbox.localhost" };

describe.skipIf(!hasPg)("cluster: three serve instances on one PostgreSQL database (clocks skewed ±2 min)", () => {
  let db: { url: string; drop(): Promise<void> };
  let dir: string;
  const nodes: Instance[] = [];
  let session = "";

  beforeAll(async () => {
    db = await tempDatabase("benchdata_cluster");
    dir = mkdtempSync(join(tmpdir(), "benchdata-cluster-"));
    const config = join(dir, "config.json");
    writeFileSync(
      config,
      JSON.stringify({
        target: "host",
        tiers: {
          developer: { perMinute: 60, perDay: 100000 },
          enterprise: { perMinute: 100000, perDay: 1000000, monthlyQuota: 150, blockSize: 50, blockPrice: 500 },
        },
        billing: { processor: "simulated", simulatedOutcome: "fail" },
        data: { minSampleSize: 5 },
      }),
    );
    // A small live dataset, so live requests are answered 200 rather than 404.
    const rows = ["business_id,category,segment,period,metric,value"];
    for (let b = 0; b < 12; b++) for (const m of ["gross_margin", "churn_rate"]) rows.push(`b${b},saas,smb,2026-Q3,${m},${(0.1 + b / 100).toFixed(3)}`);
    writeFileSync(join(dir, "data.csv"), rows.join("\n") + "\n");
    const imported = cli(["import", join(dir, "data.csv"), "--db", db.url]);
    expect(imported.status, imported.stderr).toBe(0);
    // PostgreSQL deployments configure the operator key sealing webhook secrets, the same on every instance.
    const env = { BENCHDATA_ADMIN_TOKEN: ADMIN, BENCHDATA_WEBHOOK_KEYS: `k1:${Buffer.alloc(32, 7).toString("base64")}` };
    for (const offset of [-120_000, 0, 120_000]) {
      nodes.push(await startServe(["--db", db.url, "--config", config], { ...env, BENCHDATA_CLOCK_OFFSET_MS: String(offset) }));
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function account(tier: string): Promise<string> {
    const r = await http(`${nodes[0]!.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, body: { name: `Cluster ${tier}`, tier } });
    expect(r.status, r.text).toBe(201);
    return r.json.session_token;
  }

  async function key(node: Instance, sessionToken: string, environment: "live" | "test"): Promise<{ key_id: string; raw_key: string }> {
    const r = await http(`${node.url}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${sessionToken}` }, body: { name: `${environment} key`, environment, scopes: ["benchmarks:read"] } });
    expect(r.status, r.text).toBe(201);
    return r.json;
  }

  const query = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.15&category=saas";

  it("a key created on one instance works on all", async () => {
    session = await account("developer");
    const k = await key(nodes[1]!, session, "test");
    for (const n of nodes) {
      const r = await http(`${n.url}${query}`, { headers: { ...TEST, authorization: `Bearer ${k.raw_key}` } });
      expect(r.status, r.text).toBe(200);
    }
  });

  it("300 concurrent requests spread over the instances admit exactly the per-minute limit", async () => {
    const k = await key(nodes[0]!, session, "test");
    const replies = await Promise.all(Array.from({ length: 300 }, (_, i) => http(`${nodes[i % 3]!.url}${query}`, { headers: { ...TEST, authorization: `Bearer ${k.raw_key}` } })));
    const ok = replies.filter((r) => r.status === 200).length;
    const limited = replies.filter((r) => r.status === 429);
    // The account already used 3 requests in the first test, but the window is per key: exactly 60 here.
    expect(ok).toBe(60);
    expect(limited).toHaveLength(240);
    for (const r of limited) {
      expect(r.json.code).toBe("rate_limit.exceeded");
      expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
      expect(r.headers["x-ratelimit-remaining"]).toBe("0");
    }
    // Every instance reports the same reset instant although their clocks are 4 minutes apart.
    const resets = new Set(limited.map((r) => r.headers["x-ratelimit-reset"]));
    expect(resets.size).toBeLessThanOrEqual(2);
  });

  it("quota: exactly the allowance is admitted across instances, one charge starts, and usage equals the accepted requests", async () => {
    const s = await account("enterprise");
    const k = await key(nodes[2]!, s, "live");
    const replies = await Promise.all(Array.from({ length: 300 }, (_, i) => http(`${nodes[i % 3]!.url}${query}`, { headers: { ...LIVE, authorization: `Bearer ${k.raw_key}` } })));
    const ok = replies.filter((r) => r.status === 200).length;
    const refused = replies.filter((r) => r.status === 402);
    expect(ok).toBe(150);
    expect(refused).toHaveLength(150);
    expect(refused.every((r) => r.json.code === "quota.exhausted")).toBe(true);
    const usage = await http(`${nodes[1]!.url}/api/v1/console/usage/summary`, { headers: { authorization: `Bearer ${s}` } });
    expect(usage.json).toMatchObject({ month: ok, monthly_limit: 150, token_balance: 0, active_keys: 1 });
    // Wait for the billing worker of whichever instance claimed the charge to settle it (it fails: simulated).
    let invoices: Reply["json"] = [];
    for (let i = 0; i < 50; i++) {
      const r = await http(`${nodes[0]!.url}/api/v1/console/invoices`, { headers: { authorization: `Bearer ${s}` } });
      invoices = r.json.invoices ?? r.json.data ?? r.json;
      if (Array.isArray(invoices) && invoices.length > 0 && invoices.every((x: { status: string }) => x.status !== "pending")) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(invoices).toHaveLength(1);
    expect(invoices[0].status).toBe("failed");
    const after = await http(`${nodes[2]!.url}${query}`, { headers: { ...LIVE, authorization: `Bearer ${k.raw_key}` } });
    expect(after.status).toBe(402);
  });

  it("rotation on one instance makes the old key fail on every other on the very next request", async () => {
    const k = await key(nodes[0]!, session, "test");
    // Each instance that will be asked again has admitted the key, so it remembers the lookup and the key check.
    for (const n of [nodes[0]!, nodes[2]!]) {
      const before = await http(`${n.url}${query}`, { headers: { ...TEST, authorization: `Bearer ${k.raw_key}` } });
      expect(before.status).toBe(200);
    }
    const rot = await http(`${nodes[1]!.url}/api/v1/console/keys/${k.key_id}/rotate`, { method: "POST", headers: { authorization: `Bearer ${session}` } });
    expect(rot.status, rot.text).toBe(200);
    for (const n of [nodes[0]!, nodes[2]!]) {
      const old = await http(`${n.url}${query}`, { headers: { ...TEST, authorization: `Bearer ${k.raw_key}` } });
      expect(old.status).toBe(401);
      expect(old.json.code).toBe("auth.inactive_key");
      const fresh = await http(`${n.url}${query}`, { headers: { ...TEST, authorization: `Bearer ${rot.json.raw_key}` } });
      expect(fresh.status).toBe(200);
    }
  });
});

type Reply = Awaited<ReturnType<typeof http>>;
