/**
 * The CLI's account and key commands go through the HTTP app in-process (with a one-time admin token),
 * so they share every validation, event and rule with the admin and console APIs.
 */
import type { ServiceConfig } from "@benchdata/core";
import { cryptoRandom, randomToken, silentLogger, systemClock } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openDb } from "./runtime.ts";

/** Calls one route of the in-process app; resolves to the JSON body or throws its error detail. */
export type Call = (method: string, path: string, body: unknown, bearer?: string) => Promise<unknown>;

/** Opens the database, runs `fn` with a caller bound to an in-process app, and closes the database. */
export async function adminCall<T>(options: { db: string; config: ServiceConfig }, fn: (call: Call) => Promise<T>): Promise<T> {
  const storage = await openDb(options.db);
  const adminToken = randomToken(cryptoRandom);
  const app = createApp({ storage, clock: systemClock, random: cryptoRandom, config: options.config, logger: silentLogger, adminToken });
  const call: Call = async (method, path, body, bearer) => {
    const res = await app.fetch(
      new Request(`http://cli.invalid${path}`, {
        method,
        headers: body === undefined ? { authorization: `Bearer ${bearer ?? adminToken}` } : { authorization: `Bearer ${bearer ?? adminToken}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const json = (await res.json()) as { detail?: string; code?: string };
    if (!res.ok) throw new Error(`${json.detail ?? res.statusText} (${json.code ?? res.status})`);
    return json;
  };
  try {
    return await fn(call);
  } finally {
    await storage.close();
  }
}
