/**
 * Helpers for this folder's tests (not part of the public API): an app over memory storage and a manual
 * clock, with shortcuts that go through the real HTTP routes (admin → account → session → keys).
 */
import type { ManualClock } from "../clock/clock.ts";
import { manualClock } from "../clock/clock.ts";
import type { DeepPartial, ServiceConfig } from "../config/config.ts";
import { defineConfig } from "../config/config.ts";
import type { Category, Metric } from "../data/catalog.ts";
import type { Storage } from "../storage/types.ts";
import { createMemoryStorage } from "../storage/memory-storage.ts";
import type { App } from "./create-app.ts";
import { createApp } from "./create-app.ts";
import type { AppOptions } from "./app-options.ts";

/** 2026-11-10T12:00:00.250Z: a quarter of a second past, so ceilings to whole seconds show. */
export const T0 = Date.parse("2026-11-10T12:00:00.250Z");
export const ADMIN_TOKEN = "admin-token-for-tests-0123456789";
export const LIVE_HOST = "http://api.benchdata.test";
export const TEST_HOST = "http://sandbox.benchdata.test";

/** A parsed response. */
export interface Res {
  readonly status: number;
  readonly headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

/** The test harness. */
export interface Kit {
  readonly app: App;
  readonly storage: Storage;
  readonly clock: ManualClock;
  readonly config: ServiceConfig;
  call(request: Request, clientAddress?: string): Promise<Res>;
  admin(method: string, path: string, body?: unknown): Promise<Res>;
  console(session: string, method: string, path: string, body?: unknown): Promise<Res>;
  data(rawKey: string | null, path: string, init?: { headers?: Record<string, string>; host?: string; clientAddress?: string; method?: string }): Promise<Res>;
  account(tier?: string): Promise<{ accountId: string; session: string }>;
  key(session: string, environment?: "live" | "test", scopes?: string[]): Promise<{ keyId: string; raw: string }>;
  /** Publishes one cell; `businesses` are the ordinals of its businesses (as an import numbers them), one per value. */
  publish(category: Category, segment: string, period: string, metric: Metric, values: number[], businesses?: number[]): Promise<void>;
}

/** Builds a harness; `config` is merged over the defaults. */
export function kit(options: { config?: DeepPartial<ServiceConfig>; storage?: Storage } & Partial<Omit<AppOptions, "storage" | "config" | "clock">> = {}): Kit {
  const storage = options.storage ?? createMemoryStorage();
  const clock = manualClock(T0);
  const config = defineConfig(options.config ?? {});
  const app = createApp({ adminToken: ADMIN_TOKEN, ...options, storage, clock, config });
  const call = async (request: Request, clientAddress?: string): Promise<Res> => {
    const r = await app.fetch(request, clientAddress === undefined ? undefined : { clientAddress });
    const text = await r.text();
    let body: unknown = text;
    if (text !== "" && (r.headers.get("content-type") ?? "").includes("json")) body = JSON.parse(text);
    return { status: r.status, headers: r.headers, body };
  };
  const json = (method: string, url: string, auth: string, body?: unknown): Request =>
    new Request(url, {
      method,
      headers: body === undefined ? { authorization: `Bearer ${auth}` } : { authorization: `Bearer ${auth}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const k: Kit = {
    app,
    storage,
    clock,
    config,
    call,
    admin: (method, path, body) => call(json(method, `${LIVE_HOST}/api/v1/admin${path}`, ADMIN_TOKEN, body)),
    console: (session, method, path, body) => call(json(method, `${LIVE_HOST}/api/v1/console${path}`, session, body)),
    data(rawKey, path, init = {}) {
      const host = init.host ?? (rawKey?.startsWith("svc_live_") ? LIVE_HOST : TEST_HOST);
      const headers: Record<string, string> = { ...(rawKey === null ? {} : { authorization: `Bearer ${rawKey}` }), ...init.headers };
      return call(new Request(`${host}/data/v1${path}`, { method: init.method ?? "GET", headers }), init.clientAddress);
    },
    async account(tier = "growth") {
      const r = await k.admin("POST", "/accounts", { name: `acct-${tier}`, tier });
      if (r.status !== 201) throw new Error(`account: ${r.status} ${JSON.stringify(r.body)}`);
      return { accountId: r.body.account_id, session: r.body.session_token };
    },
    async key(session, environment = "test", scopes = ["benchmarks:read"]) {
      const r = await k.console(session, "POST", "/keys", { name: `${environment} key`, environment, scopes });
      if (r.status !== 201) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
      return { keyId: r.body.key_id, raw: r.body.raw_key };
    },
    async publish(category, segment, period, metric, values, businesses) {
      const sorted = Float64Array.from(values).sort();
      const cell = { sorted, sampleSize: values.length, ...(businesses ? { businesses: Uint32Array.from(businesses).sort() } : {}) };
      await storage.replaceCells([{ category, segment, period, metric, cell }], []);
    },
  };
  return k;
}

/** `n` evenly spread values from `from` to `to`. */
export function spread(n: number, from: number, to: number): number[] {
  return Array.from({ length: n }, (_, i) => from + ((to - from) * i) / (n - 1));
}

/** A recording stand-in for a hook (vitest's `vi` is not available when these tests run under Deno). */
export interface Recorder<A extends unknown[]> {
  (...args: A): void;
  readonly calls: A[];
}

/** A function that records its calls. */
export function recorder<A extends unknown[] = unknown[]>(): Recorder<A> {
  const calls: A[] = [];
  return Object.assign((...args: A): void => void calls.push(args), { calls });
}
