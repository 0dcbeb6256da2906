/**
 * Throwaway PostgreSQL databases for tests: each suite creates its own (unique name) through the
 * maintenance database of BENCHDATA_TEST_PG (default postgres://postgres@127.0.0.1:5432/test) and drops it.
 * With BENCHDATA_REQUIRE_PG=1 an unreachable server fails the suite instead of skipping it.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

/** The maintenance database's URL. */
export const PG_ADMIN_URL: string = process.env.BENCHDATA_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** Whether a missing server must fail the tests. */
export const PG_REQUIRED: boolean = process.env.BENCHDATA_REQUIRE_PG === "1";

/** Whether the server answers (within 2 s). */
export async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Whether PostgreSQL tests run: true when reachable; logs why they are skipped otherwise. */
export async function pgAvailableForTests(suite: string): Promise<boolean> {
  const ok = await pgReachable();
  if (!ok && !PG_REQUIRED) {
    console.warn(`[${suite}] PostgreSQL tests SKIPPED: no server at ${PG_ADMIN_URL.replace(/\/\/[^@/]*@/, "//…@")} (set BENCHDATA_TEST_PG, or BENCHDATA_REQUIRE_PG=1 to make this a failure)`);
  }
  return ok || PG_REQUIRED;
}

function urlFor(database: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database with a unique name; returns its URL and how to drop it. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `benchdata_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: urlFor(name),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
