/** What `createApp` takes and gives, and the context its handlers share. */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ServiceConfig } from "../config/config.ts";
import type { BenchmarkSource } from "../data/source.ts";
import type { ServiceError } from "../errors/service-error.ts";
import type { SecretHasher } from "../keys/api-key.ts";
import type { FaultLog } from "../log/fault-log.ts";
import type { Logger } from "../log/logger.ts";
import type { MetricsRegistry } from "../metrics/metrics-registry.ts";
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import type { Storage } from "../storage/types.ts";
import type { SecretBox } from "../webhooks/secret-box.ts";
import type { ConsoleAssets } from "./console-ui/console-ui.ts";
import type { UsageAggregator } from "../analytics/usage-aggregator.ts";

/** Resolves a console request (and its connection) to its account id, or null when the caller is not signed in; may throw a ServiceError to refuse it. */
export type ConsoleAuth = (request: Request, client: ClientInfo) => Promise<string | null> | string | null;

/** Signals to the server's workers that work is waiting, so they act at once instead of at their next poll. */
export interface AppHooks {
  /** A data request exhausted the quota and started a charge (the pending invoice's id). */
  chargeRequested?(invoiceId: string): void;
  /** A console or data operation wrote events (and their deliveries). */
  eventsWritten?(): void;
}

/** Webhook capabilities built elsewhere (delivery, SSRF checks), injected. */
export interface WebhookCapabilities {
  /** Refuses a webhook URL with a ServiceError (422 `validation.invalid_url`), or accepts it with null. */
  checkUrl?(url: string): Promise<ServiceError | null>;
  /** Sends one synthetic `quota.warning` to each of the account's webhooks; its result is the response body. */
  sendTest?(accountId: string): Promise<unknown>;
  /**
   * Seals signing secrets before they are stored (AES-GCM under the operator's key). Defaults to
   * `plaintextSecretBox`, which stores them as given: embedders that keep secrets at rest must pass one
   * (the CLI always does), and give the same box to the delivery worker.
   */
  secretBox?: SecretBox;
}

/** Options of `createApp`. */
export interface AppOptions {
  readonly storage: Storage;
  /** Defaults to the wall clock. */
  readonly clock?: Clock;
  /** Defaults to Web Crypto. */
  readonly random?: RandomSource;
  /**
   * SHA-256 hex of a presented key or session token, once per request; defaults to core's pure-JavaScript
   * `hashSecret`. On Node pass `@benchdata/adapter-node`'s `hashSecretNode` (node:crypto, about 4× faster).
   */
  readonly hashSecret?: SecretHasher;
  /** Defaults to DEFAULT_CONFIG. */
  readonly config?: ServiceConfig;
  /**
   * Defaults to the built-in session tokens (`Authorization: Bearer bds_sess_…` or the console's cookie), which
   * also enforce the account's IP allow-list. An embedder's own function owns its network policy.
   */
  readonly consoleAuth?: ConsoleAuth;
  /**
   * The browser console's files to serve at `/console/` (`CONSOLE_ASSETS` of `@benchdata/console`; it signs in
   * with the built-in session cookie and uses the console API). Absent or false: `/console/` answers 404, and
   * the app carries no console.
   */
  readonly consoleUi?: ConsoleAssets | false;
  /** The admin API's bearer token; the admin API answers 404 when absent. */
  readonly adminToken?: string | null;
  /**
   * Who the audit log names for what the admin token does (default `admin`) and for console requests that present
   * no built-in session (an embedder's own console auth; default `console`). The CLI passes `cli`.
   */
  readonly auditActor?: string;
  /**
   * Serve the admin API only through `App.adminFetch` (a listener of its own, e.g. `benchdata serve --admin-port`):
   * `fetch` then answers 404 on admin paths. Default false: `fetch` serves the admin API too.
   */
  readonly adminSeparate?: boolean;
  /** What test keys read; defaults to the synthetic dataset of `config.data.syntheticSeed`. */
  readonly testData?: BenchmarkSource;
  /** What live keys read; defaults to `storage.benchmarks`. */
  readonly liveData?: BenchmarkSource;
  /** Defaults to a silent logger. */
  readonly logger?: Logger;
  readonly hooks?: AppHooks;
  readonly webhooks?: WebhookCapabilities;
  /** How long `/readyz` waits for storage's trivial query (ms, default 800). */
  readonly readinessTimeoutMs?: number;
  /**
   * The metrics registry to record into; defaults to a new one. Pass the same registry to the delivery and billing
   * workers (or give them `app.metrics`) so that one `GET /metrics` shows everything.
   */
  readonly metrics?: MetricsRegistry;
}

/** What the adapter knows about the connection. */
export interface ClientInfo {
  /** The peer's IP address, when known. */
  readonly clientAddress?: string;
}

/** Everything handlers share, resolved once by `createApp`. */
export interface AppContext {
  /** Storage whose every failure surfaces as 503 `service.unavailable`. */
  readonly storage: Storage;
  readonly clock: Clock;
  /** For secrets: keys, session tokens, signing secrets. */
  readonly random: RandomSource;
  /** For identifiers: a pooled source, cheap per call. */
  readonly idRandom: RandomSource;
  /** SHA-256 hex of presented keys and session tokens. */
  readonly hashSecret: SecretHasher;
  readonly config: ServiceConfig;
  readonly logger: Logger;
  /** Where storage failures are recorded (logged rate-limited, with their cause). */
  readonly faults: FaultLog;
  /** benchdata's metrics, in the registry `createApp` was given (or made). */
  readonly metrics: ServiceMetrics;
  readonly hooks: Required<AppHooks>;
  readonly webhooks: WebhookCapabilities;
  readonly testData: BenchmarkSource;
  readonly liveData: BenchmarkSource;
  readonly consoleAuth: ConsoleAuth;
  readonly adminToken: string | null;
  /** This instance's usage analytics aggregate, or null when `analytics.enabled` is false. */
  readonly analytics: UsageAggregator | null;
  /** `AppOptions.auditActor`, or null for the defaults. */
  readonly auditActor: string | null;
}
