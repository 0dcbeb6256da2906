// Storage faults under load against a real `benchdata serve` (issue 18, item 5): PostgreSQL cut and restored
// through a TCP proxy, and SQLite on a tmpfs filled to the brim. Each asserts that every answer is a 200 or a
// proper 503 (service.unavailable with Retry-After, never a connection error), that the instance recovers
// without a restart, that usage equals the 200s, and that the log names the cause and the recovery.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { startTcpProxy } from "../../storage-kysely/src/test-support/tcp-proxy.ts";
import type { Answer } from "./load.ts";
import { startLoad } from "./load.ts";
import { ADMIN, countedCalls, importLiveData, liveHeaders, liveKey, logLines, QUERY, writeConfig } from "./fault-fixture.ts";
import type { Instance } from "./helpers.ts";
import { http, pgAvailable, startServe, tempDatabase } from "./helpers.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every answer is a 200 or a 503 `service.unavailable` with Retry-After. */
function expectOnlyProper(answers: readonly Answer[]): void {
  const improper = answers.filter((a) => a.status !== 200 && !(a.status === 503 && a.code === "service.unavailable" && a.retryAfter !== undefined && /^\d+$/.test(a.retryAfter)));
  expect(improper.slice(0, 5), `${improper.length} improper answers`).toEqual([]);
}

const hasPg = await pgAvailable();

describe.skipIf(!hasPg)("PostgreSQL cut and restored under load (real benchdata serve, TCP proxy)", () => {
  it("answers only 200 or 503 with Retry-After, recovers without a restart, counts every 200, logs cause and recovery", async () => {
    const database = await tempDatabase("bd_fault_pg");
    const target = new URL(database.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(database.url);
    proxied.port = String(proxy.port);
    const dir = mkdtempSync(join(tmpdir(), "bd-fault-pg-"));
    let node: Instance | undefined;
    try {
      const env = { BENCHDATA_ADMIN_TOKEN: ADMIN, BENCHDATA_WEBHOOK_KEYS: `k1:${Buffer.alloc(32, 9).toString("base64")}` };
      importLiveData(dir, database.url, env);
      node = await startServe(["--db", proxied.toString(), "--config", writeConfig(dir)], env);
      const { accountId, rawKey } = await liveKey(node);
      const load = startLoad({ url: node.url, path: QUERY, headers: liveHeaders(rawKey), concurrency: 8 });
      await sleep(1_000);
      const cutAt = Date.now();
      await proxy.down();
      await sleep(3_000);
      // While the database is away the instance is alive but not ready.
      expect((await http(`${node.url}/healthz`)).status).toBe(200);
      const ready = await http(`${node.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.json.reason).toMatch(/^storage_/);
      await proxy.up();
      const restoredAt = Date.now();
      await sleep(2_000);
      const report = await load.stop();

      expect(report.errors).toEqual({});
      expectOnlyProper(report.answers);
      const during = report.answers.filter((a) => a.at > cutAt + 1_000 && a.at < restoredAt);
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((a) => a.status === 200)).toEqual([]);
      // Recovery without a restart: 200s again after the proxy is back, and only 200s in the last second.
      const after = report.answers.filter((a) => a.at > restoredAt);
      expect(after.filter((a) => a.status === 200).length).toBeGreaterThan(20);
      expect(report.answers.filter((a) => a.at > restoredAt + 1_000 && a.status !== 200)).toEqual([]);
      expect((await http(`${node.url}/readyz`)).status).toBe(200);
      expect(report.count(200)).toBeGreaterThan(100);
      expect(report.count(503)).toBeGreaterThan(0);

      const lines = logLines(node);
      const first = lines.find((l) => l.msg === "storage unavailable: answering 503");
      expect(first, "the outage's first line").toBeDefined();
      expect(first!.cause).toMatch(/^(ECONNREFUSED|ECONNRESET|EPIPE|57P01|08\w+|timeout|connection_terminated)$/);
      expect(lines.some((l) => l.msg === "storage recovered" && (l.failures_total as number) > 0)).toBe(true);
      // A storm must not flood the log: far fewer fault lines than 503s.
      expect(lines.filter((l) => String(l.msg).startsWith("storage ")).length).toBeLessThan(20);

      await node.stop();
      // Usage and the 200s (the key's set-up made no data request). Never an uncounted 200. A cut can, however,
      // fall between PostgreSQL committing an admission and its reply reaching the server: that request is
      // answered 503 although counted. Only requests in flight at the cut can be such (at most one per
      // connection of the load); measured: 0 to 3 of about 2,000.
      const counted = (await countedCalls(database.url, accountId)).month;
      expect(counted).toBeGreaterThanOrEqual(report.count(200));
      expect(counted - report.count(200)).toBeLessThanOrEqual(8);
    } finally {
      if (node) await node.stop();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
      await database.drop();
    }
  }, 30_000);
});

/** Mounts a tmpfs of `size` at `dir` (needs root and a kernel that allows it); the reason when it cannot. */
function mountTmpfs(dir: string, size: string): string | null {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    return null;
  } catch (e) {
    return ((e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message).slice(0, 200);
  }
}

/** Writes `path` until the file system has no byte left (ENOSPC at every size down to one byte). */
function fillToTheBrim(path: string): number {
  const fd = openSync(path, "w");
  let written = 0;
  try {
    for (let size = 1 << 20; size >= 1; size >>= 2) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          const n = writeSync(fd, chunk);
          written += n;
          if (n < size) break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

// Whether a tmpfs can be mounted here: probed once (mounted and unmounted at once), mounted for the test itself.
const probe = mkdtempSync(join(tmpdir(), "bd-fault-probe-"));
const cannotMount = mountTmpfs(probe, "1m");
if (cannotMount === null) execFileSync("umount", [probe]);
rmSync(probe, { recursive: true, force: true });
if (cannotMount !== null) console.warn(`cannot mount a tmpfs (${cannotMount}): skipping the SQLite full-disk test (it needs root, as in CI)`);

describe.skipIf(cannotMount !== null)("SQLite on a full disk under load (real benchdata serve, 8 MB tmpfs)", () => {
  let fsRoot: string | undefined;
  let mounted = false;
  afterAll(() => {
    if (fsRoot === undefined) return;
    try {
      // A server still holding the file open (a timed-out test) makes a plain umount fail: detach it lazily then.
      if (mounted) {
        try {
          execFileSync("umount", [join(fsRoot, "fs")]);
        } catch {
          execFileSync("umount", ["-l", join(fsRoot, "fs")]);
        }
      }
    } finally {
      rmSync(fsRoot, { recursive: true, force: true });
    }
  });

  it("answers only 503 while full, logs SQLITE_FULL, recovers once space is freed, stays intact and counts exactly the 200s", async () => {
    fsRoot = mkdtempSync(join(tmpdir(), "bd-fault-full-"));
    const mountPoint = join(fsRoot, "fs");
    mkdirSync(mountPoint);
    const error = mountTmpfs(mountPoint, "8m");
    expect(error, "mounting the tmpfs").toBeNull();
    mounted = true;
    const file = join(mountPoint, "full.db");
    const db = `sqlite:${file}`;
    importLiveData(fsRoot, db);
    const node = await startServe(["--db", db, "--config", writeConfig(fsRoot)], { BENCHDATA_ADMIN_TOKEN: ADMIN });
    try {
      const { accountId, session, rawKey } = await liveKey(node);
      const phase = async (ms: number) => {
        const load = startLoad({ url: node.url, path: QUERY, headers: liveHeaders(rawKey), concurrency: 4 });
        await sleep(ms);
        return load.stop();
      };
      const before = await phase(500);
      expect(before.errors).toEqual({});
      expect(before.count(200)).toBe(before.answers.length);

      // Fill the disk: the WAL first emptied into the database (the server is idle), so any write needs a new block.
      const checkpoint = new Database(file);
      try {
        checkpoint.pragma("busy_timeout = 2000");
        expect(checkpoint.pragma("wal_checkpoint(TRUNCATE)", { simple: false })).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
      } finally {
        checkpoint.close();
      }
      const filler = join(mountPoint, "filler");
      expect(fillToTheBrim(filler)).toBeGreaterThan(1_000_000);
      const full = await phase(1_500);
      const keyWhileFull = await http(`${node.url}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session}` }, body: { name: "full", environment: "live", scopes: ["benchmarks:read"] } });
      expect(full.errors).toEqual({});
      expect(full.answers.length).toBeGreaterThan(20);
      expectOnlyProper(full.answers);
      expect(full.count(503)).toBe(full.answers.length);
      expect(keyWhileFull.status).toBe(503);
      expect(keyWhileFull.json).toMatchObject({ code: "service.unavailable", status: 503 });

      unlinkSync(filler);
      const after = await phase(1_500);
      expect(after.errors).toEqual({});
      expectOnlyProper(after.answers);
      // Recovery without a restart: the first request after the space came back is served.
      expect(after.answers[0]?.status).toBe(200);
      expect(after.count(200)).toBe(after.answers.length);
      expect((await http(`${node.url}/api/v1/console/keys`, { method: "POST", headers: { authorization: `Bearer ${session}` }, body: { name: "after", environment: "live", scopes: ["benchmarks:read"] } })).status).toBe(201);

      const lines = logLines(node);
      const first = lines.find((l) => l.msg === "storage unavailable: answering 503");
      expect(first).toMatchObject({ level: "error", cause: "SQLITE_FULL" });
      expect(String(first!.error)).toMatch(/full/i);
      expect(lines.some((l) => l.msg === "storage recovered" && l.last_cause === "SQLITE_FULL")).toBe(true);
      expect(lines.filter((l) => String(l.msg).startsWith("storage ")).length).toBeLessThan(10);

      expect(await node.stop()).toBe(0);
      const check = new Database(file, { readonly: true });
      try {
        expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
      } finally {
        check.close();
      }
      expect((await countedCalls(db, accountId)).month).toBe(before.count(200) + after.count(200));
    } finally {
      await node.stop();
    }
  }, 30_000);
});

