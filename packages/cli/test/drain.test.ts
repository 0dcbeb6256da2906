// SIGTERM under load against a real `benchdata serve` (issue 18): a load generator that behaves like a load
// balancer (it stops sending once /readyz says 503) sees every request it sent answered, none reset; requests
// in flight when the listener closes are answered with Connection: close; usage equals the 200s; the process
// exits 0 with the drain's log lines; the SQLite file is intact.
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN, countedCalls, exited, importLiveData, liveHeaders, liveKey, logLines, QUERY, writeConfig } from "./fault-fixture.ts";
import type { Instance } from "./helpers.ts";
import { http, startServe } from "./helpers.ts";
import { startLoad } from "./load.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A POST whose body arrives slowly: in flight from its headers until its last byte, `ms` later. */
function slowPost(url: string, path: string, token: string, body: unknown, ms: number): Promise<{ status: number; connection: string | undefined; text: string }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: "POST", agent: false, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      let data = "";
      res.on("data", (c: Buffer) => (data += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text: data }));
    });
    req.on("error", reject);
    req.flushHeaders();
    req.write(text.slice(0, 5));
    setTimeout(() => req.end(text.slice(5)), ms);
  });
}

describe("SIGTERM under load (real benchdata serve, SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "benchdata-drain-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("readyz turns 503 at once, serving goes on for the drain delay, every request sent is answered (none reset), usage equals the 200s, exit 0", async () => {
    const db = `sqlite:${join(dir, "drain.db")}`;
    const config = writeConfig(dir);
    importLiveData(dir, db);
    // The drain delay comes from its environment variable (it wins over the file's default of 0).
    const node: Instance = await startServe(["--db", db, "--config", config], { BENCHDATA_ADMIN_TOKEN: ADMIN, BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: "2" });
    try {
      const { accountId, session, rawKey } = await liveKey(node);
      expect((await http(`${node.url}${QUERY}`, { headers: liveHeaders(rawKey) })).status).toBe(200);

      // A keep-alive connection that sits idle through the drain: the server closes it (no request is lost on it).
      const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
      let idleSocket: Socket | undefined;
      await new Promise<void>((resolve, reject) => {
        const r = request(`${node.url}/healthz`, { agent: idleAgent }, (res) => {
          idleSocket = res.socket;
          res.resume();
          res.on("end", resolve);
        });
        r.on("error", reject);
        r.end();
      });
      let idleError: string | null = null;
      const idleClosed = new Promise<void>((resolve) => idleSocket!.once("close", () => resolve()));
      idleSocket!.on("error", (e: NodeJS.ErrnoException) => (idleError = e.code ?? e.message));

      const load = startLoad({ url: node.url, path: QUERY, headers: liveHeaders(rawKey), concurrency: 8, followReadiness: true, pollMs: 50 });
      await sleep(700);
      expect(load.routable).toBe(true);
      const sigterm = Date.now();
      // In flight from before the signal until after the listener closed (2 s delay): answered all the same.
      const slow = slowPost(node.url, "/api/v1/console/keys", session, { name: "slow", environment: "test", scopes: ["benchmarks:read"] }, 2_500).catch((e: Error) => ({ status: 0, connection: undefined, text: `cut: ${e.message}` }));
      await sleep(20);
      node.child.kill("SIGTERM");
      // The drain delay: /readyz says 503 as soon as the signal is handled, and the instance still serves.
      let during = await http(`${node.url}/readyz`);
      for (let i = 0; i < 100 && during.status === 200; i++) {
        await sleep(10);
        during = await http(`${node.url}/readyz`);
      }
      expect(during.status).toBe(503);
      expect(during.json).toMatchObject({ ready: false, reason: "draining", code: "service.unavailable", status: 503 });
      const servedDuring = await http(`${node.url}${QUERY}`, { headers: liveHeaders(rawKey) });
      expect(servedDuring.status).toBe(200);
      expect(servedDuring.headers.connection).toBe("close");

      // A hang fails with the server's last log lines rather than a bare test time-out.
      const within = <T,>(p: Promise<T>, label: string): Promise<T> =>
        Promise.race([p, sleep(15_000).then((): never => { throw new Error(`${label} did not settle; last log lines:\n${logLines(node).slice(-8).map((l) => JSON.stringify(l)).join("\n")}`); })]);
      const report = await within(load.drained, "drained");
      const slowAnswer = await within(slow, "slow");
      const exitCode = await within(exited(node), "exit");
      await within(idleClosed, "idle");
      idleAgent.destroy();

      expect(report.errors).toEqual({});
      // The balancer stopped on /readyz (within the delay: otherwise its requests would have been refused).
      expect(report.unroutableAt).not.toBeNull();
      expect(report.unroutableAt!).toBeGreaterThan(sigterm);
      const statuses = new Set(report.answers.map((a) => a.status));
      expect([...statuses]).toEqual([200]);
      expect(report.count(200)).toBeGreaterThan(50);
      expect(slowAnswer.status, slowAnswer.text).toBe(201);
      expect(slowAnswer.connection).toBe("close");
      expect(idleError).toBeNull();
      expect(exitCode).toBe(0);

      const msgs = logLines(node).map((l) => l.msg);
      const order = ["SIGTERM received: draining in-flight requests", "draining: /readyz answers 503 from now on", "draining: still serving until the drain delay ends", "drain: no longer accepting connections; answering the requests already accepted", "drain: requests answered, workers stopped; closing storage", "shut down cleanly"];
      const at = order.map((m) => msgs.indexOf(m));
      expect(at.every((i) => i >= 0), msgs.join("\n")).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);

      // Every 200 was counted, nothing else (the warm-up request, the one served during the delay, and the load's).
      const counted = await countedCalls(db, accountId);
      expect(counted.month).toBe(report.count(200) + 2);
      const sqlite = new Database(join(dir, "drain.db"), { readonly: true });
      try {
        expect(sqlite.pragma("integrity_check", { simple: true })).toBe("ok");
      } finally {
        sqlite.close();
      }
    } finally {
      await node.stop("SIGKILL");
    }
  }, 60_000);
});
