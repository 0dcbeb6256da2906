// The setting of the fault tests: a config, a small live dataset imported into the database, an enterprise
// account with a live key on a running `benchdata serve`, and the reads that check the database afterwards.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { openStorage } from "@benchdata/storage-kysely";
import type { Instance } from "./helpers.ts";
import { cli, http } from "./helpers.ts";

export const ADMIN = "fault-tests-admin-token-0123456789abcdef";
/** The Host that makes a request target live keys (the default target is `host`). */
export const LIVE_HOST = "api.localhost";
export const QUERY = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.15&category=saas";

/** Writes the config the fault tests share (limits far above the load) merged with `extra`; returns its path. */
export function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, "config.json");
  writeFileSync(
    path,
    JSON.stringify({
      tiers: { enterprise: { perMinute: 1_000_000, perDay: 10_000_000, monthlyQuota: 10_000_000, blockSize: 1_000_000, blockPrice: 100 } },
      data: { minSampleSize: 5 },
      ...extra,
    }),
  );
  return path;
}

/** Imports a small live dataset (12 businesses, saas/smb/2026-Q3) with `benchdata import`. */
export function importLiveData(dir: string, db: string, env: Record<string, string> = {}): void {
  const rows = ["business_id,category,segment,period,metric,value"];
  for (let b = 0; b < 12; b++) rows.push(`b${b},saas,smb,2026-Q3,gross_margin,${(0.1 + b / 100).toFixed(3)}`);
  writeFileSync(join(dir, "data.csv"), rows.join("\n") + "\n");
  const imported = cli(["import", join(dir, "data.csv"), "--db", db], env);
  expect(imported.status, imported.stderr).toBe(0);
}

/** An enterprise account and a live key, through the admin and console APIs of `node`. */
export async function liveKey(node: Instance): Promise<{ accountId: string; session: string; rawKey: string; keyId: string }> {
  const account = await http(`${node.url}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` }, body: { name: "Faults", tier: "enterprise" } });
  expect(account.status, account.text).toBe(201);
  const key = await http(`${node.url}/api/v1/console/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.json.session_token}` },
    body: { name: "load", environment: "live", scopes: ["benchmarks:read"] },
  });
  expect(key.status, key.text).toBe(201);
  return { accountId: account.json.account_id, session: account.json.session_token, rawKey: key.json.raw_key, keyId: key.json.key_id };
}

/** The headers of a live data request with `rawKey`. */
export function liveHeaders(rawKey: string): Record<string, string> {
  return { host: LIVE_HOST, authorization: `Bearer ${rawKey}` };
}

/** The calls the database counted for the account this billing period (opened directly, the server stopped or not). */
export async function countedCalls(db: string, accountId: string): Promise<{ month: number; today: number }> {
  const storage = await openStorage(db);
  try {
    const u = await storage.usage(accountId, Date.now(), 1, 10_000_000, 1_000_000);
    return { month: u.month, today: u.today };
  } finally {
    await storage.close();
  }
}

/** The parsed JSON log lines of an instance. */
export function logLines(node: Instance): { msg: string; level: string; [field: string]: unknown }[] {
  const lines: { msg: string; level: string }[] = [];
  for (const chunk of node.logs)
    for (const line of chunk.split("\n")) {
      try {
        const entry = JSON.parse(line) as { msg?: unknown };
        if (typeof entry.msg === "string") lines.push(entry as { msg: string; level: string });
      } catch {
        // not a log line
      }
    }
  return lines;
}

/** Resolves with the exit code once the instance has exited by itself (null when a signal ended it). */
export function exited(node: Instance): Promise<number | null> {
  const child = node.child;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}
