/** The operator's configuration (the contract's JSON file), its defaults, and strict validation. */
import type { Tier } from "../scopes/scopes.ts";
import type { TierLimits } from "../storage/types.ts";

/** Where a deployment's requests are aimed: the contract's auth step 4. */
export type Target = "live" | "test" | "host";

/** The whole configuration, every key filled in. */
export interface ServiceConfig {
  readonly target: Target;
  readonly trustProxy: boolean;
  readonly currency: string;
  readonly tiers: { readonly [T in Tier]: TierLimits };
  readonly webhooks: {
    readonly retryDelaysSeconds: readonly number[];
    readonly timeoutSeconds: number;
    readonly allowHttp: boolean;
    readonly allowPrivateNetworks: boolean;
    readonly maxPerAccount: number;
    readonly concurrencyPerWebhook: number;
    /** A webhook whose every attempt failed for this many days is disabled (0: never for this reason). */
    readonly disableAfterDays: number;
    /** A webhook with this many dead deliveries in a row is disabled (0: never for this reason). */
    readonly disableAfterDeadDeliveries: number;
    /** Deliveries to one webhook are attempted in event order, one at a time (false: up to `concurrencyPerWebhook` at once, any order). */
    readonly ordered: boolean;
    /** After a secret rotation, deliveries carry both signatures for this many hours. */
    readonly secretOverlapHours: number;
    /** `POST /webhooks/{id}/recover` calls an account may make per hour (core's `recoverStep`). */
    readonly recoverCallsPerHour: number;
    /** Deliveries an account's recover calls may re-queue per hour, all webhooks together; one call takes what is left. */
    readonly recoverDeliveriesPerHour: number;
  };
  readonly billing: {
    readonly processor: "simulated" | "stripe";
    readonly simulatedOutcome: "succeed" | "fail";
    readonly anchorDay: number;
    readonly retryAfterFailureSeconds: number;
    readonly maxAutoChargesPerPeriod: number;
    readonly stripe: { readonly apiBase: string; readonly secretKeyEnv: string };
  };
  readonly data: { readonly minSampleSize: number; readonly syntheticSeed: string };
  readonly keys: { readonly maxPerAccount: number };
  /** Console sessions last `ttlDays` (1-90); a one-time sign-in link `signInLinkMinutes`. */
  readonly sessions: { readonly ttlDays: number; readonly signInLinkMinutes: number };
  /** `GET /metrics` requires `Authorization: Bearer <token>`; null (the default) turns the endpoint off. */
  readonly metrics: { readonly token: string | null };
  /** SIGTERM: how long to keep serving with `/readyz` at 503 before closing, and the longest wait for in-flight requests. */
  readonly shutdown: { readonly drainDelaySeconds: number; readonly drainTimeoutSeconds: number };
  /** `access`: one JSON line per request (request id, method, route template, status, duration, key prefix); off by default. */
  readonly log: { readonly access: boolean };
  /** How long the pruning worker keeps what is no longer needed, in days (docs/operations.md, "Retention and pruning"). */
  readonly retention: RetentionConfig;
  /** Usage analytics per key (docs/analytics.md): counted in memory, written every `flushSeconds`; `enabled: false` counts nothing. */
  readonly analytics: { readonly enabled: boolean; readonly flushSeconds: number; readonly maxSeries: number };
  /** The HTTP server: a request's headers and body must arrive within `requestTimeoutSeconds` of its start (else 408 `request.timeout`). */
  readonly server: { readonly requestTimeoutSeconds: number };
}

/** How many days each kind of history is kept before the pruning worker deletes it. */
export interface RetentionConfig {
  /** Finished deliveries (succeeded or dead) and their attempts, counted from their event's time. */
  readonly deliveriesDays: number;
  /** Events no delivery refers to any more, counted from their time. */
  readonly eventsDays: number;
  /** Console sessions and sign-in links, counted from their expiry. */
  readonly sessionsDays: number;
  /** Day counter rows of past UTC days, today included in the count (their counts move to the usage history). */
  readonly dayCountersDays: number;
  /** The usage history by UTC day (the console's chart), today included in the count. */
  readonly usageDays: number;
  /** Usage analytics' hourly rows, counted from the hour's start. */
  readonly analyticsHourlyDays: number;
  /** Usage analytics' daily rows, counted from the UTC day's start. */
  readonly analyticsDailyDays: number;
}

/** The contract's defaults. Enterprise limits are per account; these are its starting values. */
export const DEFAULT_CONFIG: ServiceConfig = {
  target: "host",
  trustProxy: false,
  currency: "usd",
  tiers: {
    developer: { perMinute: 60, perDay: 10_000, monthlyQuota: 100_000, blockSize: 10_000, blockPrice: 1000 },
    startup: { perMinute: 100, perDay: 100_000, monthlyQuota: 1_000_000, blockSize: 100_000, blockPrice: 5000 },
    growth: { perMinute: 300, perDay: 500_000, monthlyQuota: 5_000_000, blockSize: 500_000, blockPrice: 20000 },
    enterprise: { perMinute: 1000, perDay: 2_000_000, monthlyQuota: 20_000_000, blockSize: 2_000_000, blockPrice: 60000 },
  },
  webhooks: {
    retryDelaysSeconds: [0, 30, 300, 1800, 7200],
    timeoutSeconds: 30,
    allowHttp: false,
    allowPrivateNetworks: false,
    maxPerAccount: 10,
    concurrencyPerWebhook: 4,
    disableAfterDays: 5,
    disableAfterDeadDeliveries: 20,
    ordered: true,
    secretOverlapHours: 24,
    recoverCallsPerHour: 10,
    recoverDeliveriesPerHour: 1000,
  },
  billing: {
    processor: "simulated",
    simulatedOutcome: "succeed",
    anchorDay: 1,
    retryAfterFailureSeconds: 3600,
    maxAutoChargesPerPeriod: 10,
    stripe: { apiBase: "https://api.stripe.com", secretKeyEnv: "STRIPE_SECRET_KEY" },
  },
  data: { minSampleSize: 30, syntheticSeed: "benchdata" },
  keys: { maxPerAccount: 50 },
  sessions: { ttlDays: 30, signInLinkMinutes: 15 },
  metrics: { token: null },
  shutdown: { drainDelaySeconds: 0, drainTimeoutSeconds: 30 },
  log: { access: false },
  retention: { deliveriesDays: 30, eventsDays: 30, sessionsDays: 7, dayCountersDays: 2, usageDays: 400, analyticsHourlyDays: 30, analyticsDailyDays: 400 },
  analytics: { enabled: true, flushSeconds: 5, maxSeries: 100_000 },
  server: { requestTimeoutSeconds: 30 },
};

/** Deep-merges `over` onto `base` (arrays and scalars replace). */
export function mergeConfig<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (Array.isArray(over) || typeof over !== "object" || over === null) return over as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, val] of Object.entries(over)) out[k] = mergeConfig((base as Record<string, unknown>)[k], val);
  return out as T;
}

/** Merges partial settings over the defaults without validation (for code that builds its config in TypeScript). */
export function defineConfig(partial: DeepPartial<ServiceConfig> = {}): ServiceConfig {
  return mergeConfig(DEFAULT_CONFIG, partial);
}

/** Every property optional, recursively (arrays replaced whole). */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** The effective limits of an account: its tier's, overridden by the account's own. */
export function effectiveLimits(config: ServiceConfig, tier: Tier, overrides: Partial<TierLimits>): TierLimits {
  return { ...config.tiers[tier], ...overrides };
}
