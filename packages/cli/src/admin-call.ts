/**
 * The CLI's account and key commands go through the HTTP app in-process (with a one-time admin token),
 * so they share every validation, event and rule with the admin and console APIs.
 */
import type { Logger, ServiceConfig } from "@benchdata/core";
import { cryptoRandom, randomToken, silentLogger, systemClock, timingSafeEqual } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openDb } from "./runtime.ts";

/** The in-process app refused a call: its status, code and detail. */
export class AdminCallError extends Error {
  override name = "AdminCallError";
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`${detail} (${code})`);
  }
}

/** Calls one route of the in-process app; resolves to the JSON body or throws an AdminCallError. */
export type Call = (method: string, path: string, body: unknown) => Promise<unknown>;

/** GETs one route of the in-process app; resolves to its body as it is written (an export), or throws an AdminCallError. */
export type StreamCall = (path: string) => Promise<ReadableStream<Uint8Array>>;

/**
 * Opens the database, runs `fn` with a caller bound to an in-process app, and closes the database.
 * With `consoleAccount`, the one-time token also signs console routes in as that account: no console
 * session is created (none to leak or outlive the command), and the account's IP allow-list, which guards
 * sessions used over the network, does not apply to the operator's own command.
 */
export async function adminCall<T>(options: { db: string; config: ServiceConfig; consoleAccount?: string; logger?: Logger }, fn: (call: Call, stream: StreamCall) => Promise<T>): Promise<T> {
  const storage = await openDb(options.db);
  const token = randomToken(cryptoRandom);
  const bearer = `Bearer ${token}`;
  const consoleAccount = options.consoleAccount;
  const app = createApp({
    storage,
    clock: systemClock,
    random: cryptoRandom,
    config: options.config,
    logger: options.logger ?? silentLogger,
    adminToken: token,
    // What the command changes is recorded in the audit log as done by `cli`.
    auditActor: "cli",
    consoleAuth: (request) => {
      const given = request.headers.get("authorization");
      return consoleAccount !== undefined && given !== null && timingSafeEqual(given, bearer) ? consoleAccount : null;
    },
  });
  const send = (method: string, path: string, body: unknown): Promise<Response> =>
    app.fetch(
      new Request(`http://cli.invalid${path}`, {
        method,
        headers: body === undefined ? { authorization: bearer } : { authorization: bearer, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  const refused = async (res: Response): Promise<AdminCallError> => {
    const json = (await res.json()) as { detail?: string; code?: string };
    return new AdminCallError(res.status, json.code ?? String(res.status), json.detail ?? res.statusText);
  };
  const call: Call = async (method, path, body) => {
    const res = await send(method, path, body);
    if (!res.ok) throw await refused(res);
    return res.json();
  };
  const stream: StreamCall = async (path) => {
    const res = await send("GET", path, undefined);
    if (!res.ok || res.body === null) throw await refused(res);
    return res.body;
  };
  try {
    return await fn(call, stream);
  } finally {
    await storage.close();
  }
}
