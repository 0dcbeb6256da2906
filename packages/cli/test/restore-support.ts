// Shared by the operator-key and backup tests: a real webhook receiver whose answer can be switched, and the
// console calls those tests repeat against a running `benchdata serve`.
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import { expect } from "vitest";
import { http } from "./helpers.ts";

/** One request a receiver got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver on loopback answering `status` (switchable), recording every request. */
export interface Receiver {
  readonly url: string;
  readonly got: Received[];
  status: number;
  close(): Promise<void>;
}

export async function receiver(status = 200): Promise<Receiver> {
  const got: Received[] = [];
  const rx = { url: "", got, status, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(rx.status);
      res.end("ok");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  rx.close = () =>
    new Promise((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return rx;
}

/** Whether `r` carries a valid X-Service-Signature under `secret` (checked by an independent library). */
export function signedBy(secret: string, r: Received): Promise<boolean> {
  return octokitVerify(secret, r.body, String(r.headers["x-service-signature"]));
}

/** Every event id a receiver saw (retries of one event count once). */
export function eventIds(got: readonly Received[]): Set<string> {
  return new Set(got.map((r) => JSON.parse(r.body).id as string));
}

/** Polls `check` until it is true (or fails the test after `ms`). */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Console calls against a running server as one account's session. */
export function consoleOf(base: string, session: string) {
  return async (method: string, path: string, body?: unknown) => {
    const r = await http(`${base}/api/v1/console${path}`, { method, headers: { authorization: `Bearer ${session}` }, ...(body !== undefined ? { body } : {}) });
    return r;
  };
}

/** Creates an account through the admin API; its console session token. */
export async function newAccount(base: string, admin: string, name: string, tier = "growth"): Promise<{ accountId: string; session: string }> {
  const r = await http(`${base}/api/v1/admin/accounts`, { method: "POST", headers: { authorization: `Bearer ${admin}` }, body: { name, tier } });
  expect(r.status, r.text).toBe(201);
  return { accountId: r.json.account_id, session: r.json.session_token };
}

/**
 * Runs `during` (a backup) while four loops send data requests with `rawKey` and a fifth creates keys (each an
 * event, a delivery). Returns what was admitted before `during` began and sent before it ended: a snapshot taken
 * inside `during` holds usage between the two.
 */
export async function underLoad<T>(base: string, session: string, rawKey: string, during: () => Promise<T>): Promise<{ result: T; admittedBeforeStart: number; sentBeforeEnd: number }> {
  const c = consoleOf(base, session);
  const query = "/data/v1/benchmarks/percentile?metric=gross_margin&value=0.15&category=saas";
  let stop = false;
  let done = false;
  let admitted = 0;
  let sentBeforeEnd = 0;
  let keysMade = 0;
  const loops = Array.from({ length: 4 }, async () => {
    while (!stop) {
      sentBeforeEnd += done ? 0 : 1;
      const r = await http(`${base}${query}`, { headers: { host: "sandbox.localhost", authorization: `Bearer ${rawKey}` } });
      expect(r.status, r.text).toBe(200);
      admitted++;
    }
  });
  const maker = (async () => {
    while (!stop) {
      expect((await c("POST", "/keys", { name: `k${keysMade++}`, environment: "test", scopes: ["benchmarks:read"] })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await until("some load", () => admitted >= 50);
  const admittedBeforeStart = admitted;
  const result = await during();
  done = true;
  await until("load after the backup", () => admitted >= sentBeforeEnd + 20);
  stop = true;
  await Promise.all([...loops, maker]);
  return { result, admittedBeforeStart, sentBeforeEnd };
}
