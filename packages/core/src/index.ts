/**
 * @benchdata/core: the runtime-agnostic computation core. Pure functions over storage and clock
 * interfaces; no HTTP router or validation library is pulled in by this entry point.
 */
export type { Clock, ManualClock, RandomSource } from "./clock/clock.ts";
export { cryptoRandom, isCalendarTime, isoTime, manualClock, systemClock } from "./clock/clock.ts";
export type { ErrorBody } from "./errors/service-error.ts";
export { isServiceError, ServiceError } from "./errors/service-error.ts";
export type { ErrorCode } from "./errors/error-codes.ts";
export { ERROR_CODES } from "./errors/error-codes.ts";
export type { IdPrefix } from "./ids/new-id.ts";
export { isId, newId } from "./ids/new-id.ts";

export type { Environment, GeneratedKey, ParsedKey, SecretHasher } from "./keys/api-key.ts";
export { generateApiKey, hashSecret, keyDisplayPrefix, KEY_PREFIX_LENGTH, parseApiKey, randomToken, TOKEN_ALPHABET, TOKEN_LENGTH } from "./keys/api-key.ts";
export type { GeneratedSessionToken } from "./keys/session-token.ts";
export { generateSessionToken, generateSignInToken, isSessionToken, isSignInToken, MAX_SESSION_DAYS, sessionLifetimeMs } from "./keys/session-token.ts";
export { timingSafeEqual, timingSafeEqualBytes } from "./keys/constant-time.ts";

export type { Endpoint, Scope, Tier } from "./scopes/scopes.ts";
export { checkScopes, ENDPOINT_SCOPES, isScope, isTier, SCOPE_MIN_TIER, SCOPES, scopesBeyondTier, scopesForTier, tierPermits, TIERS } from "./scopes/scopes.ts";

export type { MutableWindowLog, SlidingWindowDecision, WindowDecision, WindowLog } from "./rate-limit/sliding-window.ts";
export { ArrayWindowLog, firstAfterIn, recordAdmission, slidingWindow, windowPeek } from "./rate-limit/sliding-window.ts";
export type { DailyDecision } from "./rate-limit/daily-window.ts";
export { countedDay, dailyPeek, dailyWindow, dayCounterId, utcDay } from "./rate-limit/daily-window.ts";
export type { Admission, AdmissionWrites, DayCount, QuotaReader, StoredQuota } from "./rate-limit/admission.ts";
export { admission, admissionPeek } from "./rate-limit/admission.ts";

export type { BillingPeriod } from "./quota/billing-period.ts";
export { billingPeriod } from "./quota/billing-period.ts";
export type { ChargeRequest, HoldReason, QuotaPlan, QuotaState, QuotaStep } from "./quota/quota.ts";
export {
  allowance,
  blockBuysCalls,
  chargeIdempotencyKey,
  DEFAULT_CHARGE_POLICY,
  EMPTY_QUOTA,
  quotaChargeFailed,
  quotaChargeSucceeded,
  quotaManualCharge,
  quotaReleaseHold,
  quotaRequest,
  warningThreshold,
} from "./quota/quota.ts";

export * from "./stats/index.ts";
export { decideSuppression } from "./privacy/suppression.ts";
export type { SuppressionDecision, WithheldReason } from "./privacy/suppression.ts";
export { exactRanksAllowed, interpolatedRank } from "./privacy/rank.ts";

export { fromBase64, generateSigningSecret, signatureHeader, signPayload, standardWebhookSignature, toBase64, verifySignature } from "./signing/signature.ts";

export type { EventData, EventDraft, EventType, WebhookDisabledReason } from "./events/events.ts";
export { EVENT_TYPES, isEventType, serializeEvent } from "./events/events.ts";
export { accountResumedEvent, accountSuspendedEvent, invoiceFailedEvent, invoicePaidEvent, keyCreatedEvent, keyRevokedEvent, keyRotatedEvent, quotaExhaustedEvent, quotaHeldEvent, quotaWarningEvent, webhookDisabledEvent } from "./events/builders.ts";

export type { Category, Metric, MetricDirection, MetricInfo } from "./data/catalog.ts";
export { CATEGORIES, isCategory, isMetric, METRIC_INFO, METRICS, metricsOf, offersMetric } from "./data/catalog.ts";
export type { Granularity, Period } from "./data/period.ts";
export { comparePeriods, formatPeriod, parsePeriod, periodDates, shiftPeriod } from "./data/period.ts";
export { formatMetricValue, indefiniteArticle, metricNoun, metricNounWithArticle } from "./data/format-metric-value.ts";
export type { BenchmarkSource, Cell, Dataset } from "./data/source.ts";
export { ALL_SEGMENTS } from "./data/source.ts";
export type { SyntheticOptions } from "./data/synthetic.ts";
export { createSyntheticSource, SYNTHETIC_LATEST_QUARTER, SYNTHETIC_SEGMENTS } from "./data/synthetic.ts";
export type { Prng } from "./data/prng.ts";
export { createPrng } from "./data/prng.ts";

export type { BenchmarkCell, MetricComparison } from "./merchant/compare-metric.ts";
export { betterThanPct, compareMetric } from "./merchant/compare-metric.ts";
export type { Finding, FindingKind, PeriodValues, RankEvidence, TrendEvidence } from "./merchant/merchant-insights.ts";
export { merchantInsights, STRENGTH_AT, WEAKNESS_AT } from "./merchant/merchant-insights.ts";
export type { Grade, MerchantScore, ScoreComponent } from "./merchant/merchant-score.ts";
export { gradeOf, merchantScore } from "./merchant/merchant-score.ts";
export { isMerchantId, MERCHANT_ID_MAX } from "./merchant/merchant-id.ts";
export type { PeriodStamped } from "./merchant/snapshot-order.ts";
export { latestSnapshot, previousSnapshot } from "./merchant/snapshot-order.ts";
export type { XbrlSnapshot } from "./merchant/xbrl-instance.ts";
export { decimalText, XBRL_CONCEPTS, XBRL_MERCHANT_SCHEME, XBRL_NAMESPACE, XBRL_SCHEMA_URL, xbrlInstance, xmlEscape } from "./merchant/xbrl-instance.ts";

export type * from "./storage/types.ts";
export type { Json } from "./audit/canonical-json.ts";
export { canonicalJson } from "./audit/canonical-json.ts";
export type { AuditAction, AuditBreak, AuditChainBreak, AuditDraft, AuditEntry, AuditFacts, AuditHead, AuditVerification } from "./audit/audit-entry.ts";
export { AUDIT_ACTIONS, AUDIT_GENESIS_HASH, auditDraft, auditEntryJson, auditEntryBreak, auditEntryHash, auditPersonalDigest, chainAuditEntry, isAuditAction, verifyAuditChain } from "./audit/audit-entry.ts";
export { createMemoryStorage } from "./storage/memory-storage.ts";

export type { DeepPartial, RetentionConfig, ServiceConfig, Target } from "./config/config.ts";
export { DAILY_USAGE_MAX_DAYS, RETENTION_BOUNDS } from "./config/retention-bounds.ts";
export { DEFAULT_CONFIG, defineConfig, effectiveLimits, mergeConfig } from "./config/config.ts";

export type { LogFields, Logger } from "./log/logger.ts";
export { jsonLogger, redact, silentLogger } from "./log/logger.ts";
export type { FaultLog, FaultLogOptions } from "./log/fault-log.ts";
export { faultCause, faultLog, faultMessage } from "./log/fault-log.ts";
export type { Collector, CounterChild, Family, GaugeChild, HistogramChild, MetricsRegistry } from "./metrics/metrics-registry.ts";
export { createMetricsRegistry, PROMETHEUS_CONTENT_TYPE } from "./metrics/metrics-registry.ts";
export type { ChargeOutcomeLabel, DeliveryOutcome, PrunedRows, PruneRunOutcome, RefusalReason, RouteMetrics, ServiceMetrics, UnavailableCause } from "./metrics/service-metrics.ts";
export { DELIVERY_BUCKETS, DURATION_BUCKETS, serviceMetrics } from "./metrics/service-metrics.ts";

export type { AddressClass, ParsedAddress } from "./net/ip-address.ts";
export { classifyAddress, isBlockedAddress, isIpAddress, parseIpAddress } from "./net/ip-address.ts";
export type { Cidr } from "./net/cidr.ts";
export { cidrContains, ipInRanges, parseCidr, parseIp } from "./net/cidr.ts";

export type { ResolveHost, WebhookUrlCheck, WebhookUrlOptions, WebhookUrlProblem } from "./webhooks/check-webhook-url.ts";
export { checkWebhookUrl, MAX_URL_LENGTH } from "./webhooks/check-webhook-url.ts";
export type { WebhookUrlChecker } from "./webhooks/make-webhook-url-checker.ts";
export { makeWebhookUrlChecker } from "./webhooks/make-webhook-url-checker.ts";
export type { TransportErrorKind, WebhookRequest, WebhookResponse, WebhookTransport } from "./webhooks/webhook-transport.ts";
export { decodeBodyPrefix, fetchTransport, RESPONSE_BODY_LIMIT, TransportError, transportErrorKind } from "./webhooks/webhook-transport.ts";
export type { WebhookHeaderInput } from "./webhooks/webhook-headers.ts";
export { WEBHOOK_USER_AGENT, webhookHeaders } from "./webhooks/webhook-headers.ts";
export type { DeliveryNext } from "./webhooks/delivery-next-state.ts";
export { deliveryNextState, deliveryNextStateAfterWait, parseRetryAfter } from "./webhooks/delivery-next-state.ts";
export type { WebhookHealth } from "./webhooks/webhook-health.ts";
export { failingSinceAfterPause, webhookHealthAfter } from "./webhooks/webhook-health.ts";
export type { RecoverBudget, RecoverPolicy, RecoverStep } from "./webhooks/recover-budget.ts";
export { afterRecover, RECOVER_WINDOW_MS, recoverStep } from "./webhooks/recover-budget.ts";
export type { AttemptContext, AttemptOutcome, AttemptTarget } from "./webhooks/attempt-webhook.ts";
export { attemptWebhook } from "./webhooks/attempt-webhook.ts";
export type { WorkerLoop, WorkerLoopSpec } from "./webhooks/worker-loop.ts";
export { workerLoop } from "./webhooks/worker-loop.ts";
export type { DeliveryWorker, DeliveryWorkerOptions } from "./webhooks/delivery-worker.ts";
export { createDeliveryWorker, DELIVERY_LEASE_MARGIN_MS } from "./webhooks/delivery-worker.ts";
export type { TestEventDeps, TestEventResponse, TestEventResult } from "./webhooks/send-test-event.ts";
export { sendTestEvent } from "./webhooks/send-test-event.ts";
export type { ResealReport, ResealStorage, SecretBox, SecretCheck, SecretKey, UnopenedSecret } from "./webhooks/secret-box.ts";
export {
  checkWebhookSecrets,
  createSecretBox,
  describeUnopened,
  generateSecretKeyEntry,
  isSealed,
  newSecretKeyId,
  parseSecretKeys,
  plaintextSecretBox,
  resealWebhookSecrets,
  sealedKeyId,
} from "./webhooks/secret-box.ts";
export type { DropUnopenedOptions, DropUnopenedStorage, DroppedWebhook, EndedOverlap, UnopenedDropReport, UnopenedPlan } from "./webhooks/drop-unopened-webhooks.ts";
export { dropUnopenedWebhooks, planUnopened } from "./webhooks/drop-unopened-webhooks.ts";

export type { PaymentProcessor, PaymentRequest, PaymentResult } from "./billing/payment-processor.ts";
export type { SimulatedCharge, SimulatedOutcome, SimulatedProcessor, SimulatedProcessorOptions } from "./billing/simulated-processor.ts";
export { simulatedProcessor, simulatedRef } from "./billing/simulated-processor.ts";
export type { StripeProcessorOptions } from "./billing/stripe-processor.ts";
export { STRIPE_API_VERSION, stripeProcessor, StripeUnknownOutcome } from "./billing/stripe-processor.ts";
export type { BillingWorker, BillingWorkerOptions } from "./billing/billing-worker.ts";
export { BILLING_LEASE_MARGIN_MS, createBillingWorker, paymentRequestOf } from "./billing/billing-worker.ts";
export { pendingInvoice } from "./billing/pending-invoice.ts";

export { PRUNE_ORDER, retentionCutoffs } from "./retention/retention-cutoffs.ts";
export type { PruneReport, PruneWorker, PruneWorkerOptions, PruneWorkerStore } from "./retention/prune-worker.ts";
export { createPruneWorker } from "./retention/prune-worker.ts";
export { quotaAdmission } from "./billing/quota-admission.ts";
export type { UsageOutcome } from "./analytics/usage-outcome.ts";
export { OUTCOME_COUNT, outcomeIndex, USAGE_OUTCOMES } from "./analytics/usage-outcome.ts";
export { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, latencyBucket, latencyQuantile } from "./analytics/latency-buckets.ts";
export type { UsageAggregator, UsageAggregatorOptions } from "./analytics/usage-aggregator.ts";
export { createUsageAggregator } from "./analytics/usage-aggregator.ts";
