// For the privacy attacks through HTTP (privacy-http.test.ts, privacy-counts-http.test.ts): one fresh store of
// each kind (memory; a SQLite file; PostgreSQL when reachable, see pg-test-database.ts), and an attacker with an
// ordinary enterprise key holding every data scope. Files and databases are removed after the test file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { Storage } from "@benchdata/core";
import { createMemoryStorage, defineConfig, manualClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "../open-storage.ts";
import { createTestDatabase, pgAvailableForTests } from "./pg-test-database.ts";

const ADMIN = "admin-token-for-privacy-tests-0123456789";
const LIVE = "http://api.benchdata.test";
const T0 = Date.parse("2026-11-10T12:00:00.250Z");

/** Store kind → opens one fresh store (not yet migrated). `name` labels the skip message and temp files. */
export async function privacyStores(name: string): Promise<Record<string, () => Promise<Storage>>> {
  const pgOn = await pgAvailableForTests(name);
  const dir = mkdtempSync(join(tmpdir(), `benchdata-${name}-`));
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const d of drops) await d();
    rmSync(dir, { recursive: true, force: true });
  });
  const stores: Record<string, () => Promise<Storage>> = {
    memory: async () => createMemoryStorage(),
    sqlite: async () => openStorage(`sqlite:${join(dir, `${Math.random().toString(36).slice(2)}.db`)}`, { clock: "app" }),
  };
  if (pgOn) {
    stores.postgres = async () => {
      const t = await createTestDatabase();
      drops.push(t.drop);
      return openStorage(t.url, { clock: "app" });
    };
  }
  return stores;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Res = { status: number; body: any; text: string };

export interface Attacker {
  get(path: string): Promise<Res>;
  post(path: string, body: unknown): Promise<Res>;
}

/** A server over `storage` (publication minimum 30) and a live key with every data scope, limits out of the way. */
export async function attackerOf(storage: Storage): Promise<Attacker> {
  const app = createApp({ storage, clock: manualClock(T0), config: defineConfig({ tiers: { enterprise: { perMinute: 1_000_000, perDay: 10_000_000 } } }), adminToken: ADMIN });
  const call = async (method: string, path: string, auth: string, body?: unknown): Promise<Res> => {
    const headers: Record<string, string> = { authorization: `Bearer ${auth}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const r = await app.fetch(new Request(`${LIVE}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
    const text = await r.text();
    return { status: r.status, text, body: text !== "" && (r.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : text };
  };
  const a = await call("POST", "/api/v1/admin/accounts", ADMIN, { name: "Attacker", tier: "enterprise" });
  const scopes = ["benchmarks:read", "segments:read", "merchant:read", "merchant:write", "insights:read", "compare:read", "score:read", "report:read", "export:read"];
  const k = await call("POST", "/api/v1/console/keys", a.body.session_token, { name: "live", environment: "live", scopes });
  if (k.status !== 201) throw new Error(JSON.stringify(k.body));
  return { get: (path) => call("GET", `/data/v1${path}`, k.body.raw_key), post: (path, body) => call("POST", `/data/v1${path}`, k.body.raw_key, body) };
}
