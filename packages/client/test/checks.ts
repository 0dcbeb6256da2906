// The client's checks against a real `benchdata serve`, runtime-neutral (no node:, no vitest): client.test.ts runs
// them on Node, and run-checks.ts runs the very same under Bun and Deno.
import { Benchdata, BenchdataError, OPERATIONS } from "../src/index.ts";
import type { ErrorCode, OperationId } from "../src/index.ts";

/** Where the server is and its admin token. */
export interface CheckEnv {
  readonly baseUrl: string;
  readonly adminToken: string;
}

/** What a run did: the operations it called (for the "every operation" check) and the checks passed. */
export interface CheckReport {
  readonly called: OperationId[];
  readonly passed: string[];
}

function fail(message: string): never {
  throw new Error(message);
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message);
}

function equal(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Runs `fn` and returns the BenchdataError it throws (failing when it does not throw one). */
async function refused(fn: () => Promise<unknown>, what: string): Promise<BenchdataError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof BenchdataError) return e;
    throw e;
  }
  return fail(`${what}: expected a BenchdataError`);
}

/** Asserts the call fails with `status` and `code`. */
async function expectCode(fn: () => Promise<unknown>, status: number, code: ErrorCode, what: string): Promise<BenchdataError> {
  const err = await refused(fn, what);
  equal([err.status, err.code], [status, code], what);
  assert(typeof err.detail === "string" && err.detail.length > 0, `${what}: detail`);
  return err;
}

/** The operation a request is, from the generated table (path templates matched segment by segment). */
function operationOf(method: string, url: string): OperationId | null {
  const path = new URL(url).pathname;
  for (const [id, op] of Object.entries(OPERATIONS) as [OperationId, (typeof OPERATIONS)[OperationId]][]) {
    if (op.method !== method) continue;
    const pattern = new RegExp("^" + op.path.replace(/\{[^}]+\}/g, "[^/]+") + "$");
    if (pattern.test(path)) return id;
  }
  return null;
}

/** Runs every check; throws on the first failure. */
export async function runChecks(env: CheckEnv, label: string): Promise<CheckReport> {
  const called = new Set<OperationId>();
  const passed: string[] = [];
  // An injected fetch: records which operation each request is, then uses the runtime's own fetch.
  const recording = async (request: Request): Promise<Response> => {
    const id = operationOf(request.method, request.url);
    if (id !== null) called.add(id);
    return fetch(request);
  };
  const base = { baseUrl: env.baseUrl, fetch: recording };
  const admin = new Benchdata({ ...base, adminToken: env.adminToken });
  const ok = (name: string): void => {
    passed.push(name);
  };

  // Service
  equal((await admin.healthz()).data, { ok: true }, "healthz");
  equal((await admin.readyz()).status, 200, "readyz");
  const doc = (await admin.openapi()).data as { openapi: string };
  equal(doc.openapi, "3.1.0", "openapi");
  ok("service");

  // Admin: an enterprise account (every scope) and its console
  const created = await admin.adminCreateAccount({ name: `client ${label}`, tier: "enterprise" });
  equal(created.status, 201, "adminCreateAccount status");
  const accountId = created.data.account_id;
  const console = new Benchdata({ ...base, sessionToken: created.data.session_token });
  const account = await console.getConsoleAccount();
  equal(account.data.account_id, accountId, "getConsoleAccount");
  // These checks' server has target "test": test keys at the address it was reached at, live keys nowhere.
  equal((await console.getConsoleEnvironments()).data, { target: "test", live: null, test: { base_url: new URL(env.baseUrl).origin, host_header: null } }, "getConsoleEnvironments");
  equal((await admin.adminGetAccount(accountId)).data.tier, "enterprise", "adminGetAccount");
  equal((await admin.adminUsageBreakdown(accountId, { group_by: "" })).data.group_by, [], "adminUsageBreakdown");
  ok("admin bootstrap");

  // Console: keys
  const key = await console.createKey({ name: "all scopes", environment: "test", scopes: account.data.permitted_scopes as never });
  assert(key.data.raw_key.startsWith("svc_test_"), "createKey raw_key");
  equal(key.rateLimit, null, "console responses carry no rate limit");
  assert((await console.listKeys()).data.data.some((k) => k.key_id === key.data.key_id), "listKeys");
  equal((await console.getKey(key.data.key_id)).data.name, "all scopes", "getKey");
  await expectCode(() => console.getKey("key_01JD8Z0000000000000000000X"), 404, "not_found", "getKey unknown");
  const usage = await console.getUsageSummary();
  assert(typeof usage.data.token_balance === "number", "getUsageSummary");
  equal((await console.getUsageDaily({ days: 3 })).data.data.length, 3, "getUsageDaily");
  await expectCode(() => console.getUsageDaily({ days: 500 }), 422, "validation.out_of_range", "getUsageDaily out of range");
  // Usage analytics are written every few seconds: the shape is checked here, the counts by the HTTP tests.
  const breakdown = await console.getUsageBreakdown({ granularity: "day", group_by: "key,outcome" });
  equal([breakdown.data.granularity, breakdown.data.group_by], ["day", ["key", "outcome"]], "getUsageBreakdown");
  await expectCode(() => console.getUsageBreakdown({ group_by: "nope" }), 422, "validation.invalid_parameter", "getUsageBreakdown bad group_by");
  assert((await console.getKey(key.data.key_id)).data.last_used_at === null || typeof (await console.getKey(key.data.key_id)).data.last_used_at === "string", "last_used_at");
  ok("console keys and usage");

  // Data: every endpoint once, each response with its rate-limit headers
  const data = new Benchdata({ ...base, apiKey: key.data.raw_key });
  const bench = await data.getBenchmarks({ category: "saas" });
  equal(bench.data.category, "saas", "getBenchmarks");
  assert(bench.rateLimit !== null && bench.rateLimit.limit > 0 && bench.rateLimit.remaining < bench.rateLimit.limit && bench.rateLimit.reset > 1e9, "rate limit headers");
  const period = bench.data.period;
  const rank = await data.getPercentileRank({ category: "saas", metric: "gross_margin", value: 0.7 });
  assert(rank.data.percentile >= 0 && rank.data.percentile <= 100 && rank.rateLimit !== null, "getPercentileRank");
  equal((await data.getDistribution({ category: "saas", metric: "gross_margin", buckets: 4 })).data.histogram.length, 4, "getDistribution");
  equal((await data.getHistory({ category: "saas", metric: "gross_margin", periods: 3 })).data.history.length, 3, "getHistory");
  assert((await data.listSegments({ category: "saas" })).data.segments.length > 0, "listSegments");
  assert((await data.getSegmentBreakdown({ category: "saas", metric: "gross_margin" })).rateLimit !== null, "getSegmentBreakdown");
  const merchant = `m-${label}`;
  const snap = await data.createMerchantSnapshot({ merchant_id: merchant, category: "saas", period, metrics: { gross_margin: 0.72, churn_rate: 0.03 } });
  equal(snap.status, 200, "createMerchantSnapshot");
  assert(snap.data.vcfs_id.startsWith("vcfs_"), "vcfs id");
  equal((await data.listMerchantSnapshots({ merchant_id: merchant })).data.data.length, 1, "listMerchantSnapshots");
  assert((await data.compareMerchant({ merchant_id: merchant })).rateLimit !== null, "compareMerchant");
  assert((await data.getMerchantInsights({ merchant_id: merchant })).rateLimit !== null, "getMerchantInsights");
  assert((await data.getMerchantScore({ merchant_id: merchant })).rateLimit !== null, "getMerchantScore");
  assert((await data.getReport({ merchant_id: merchant })).rateLimit !== null, "getReport");
  const xbrl = await data.exportXbrl({ merchant_id: merchant });
  assert(typeof xbrl.data === "string" && xbrl.data.includes("<xbrl"), "exportXbrl is XML text");
  ok("data endpoints");

  // Request ids: every result and every error carries its answer's X-Request-Id, to quote to the operator
  const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
  assert(bench.requestId !== null && ULID.test(bench.requestId), `result requestId: ${bench.requestId}`);
  equal(bench.requestId, bench.headers.get("x-request-id"), "result requestId is the header");
  equal((await console.getConsoleAccount()).requestId?.length, 26, "console results carry it too");
  const badCategory = await expectCode(() => data.getBenchmarks({ category: "toys" as never }), 422, "validation.invalid_category", "error with a request id");
  assert(badCategory.requestId !== null && ULID.test(badCategory.requestId) && badCategory.requestId !== bench.requestId, `error requestId: ${badCategory.requestId}`);
  equal(badCategory.requestId, badCategory.headers.get("x-request-id"), "error requestId is the header");
  assert(badCategory.message.includes(badCategory.requestId), "the error's message quotes the request id");
  // An id the caller sends is echoed, and both sides then name the request the same way.
  equal((await data.getBenchmarks({ category: "saas" }, { headers: { "x-request-id": `checks-${label}-1` } })).requestId, `checks-${label}-1`, "result echoes a sent id");
  equal((await refused(() => data.getBenchmarks({ category: "toys" as never }, { headers: { "x-request-id": `checks-${label}-2` } }), "sent id")).requestId, `checks-${label}-2`, "error echoes a sent id");
  // No answer, no id.
  equal((await refused(() => new Benchdata({ baseUrl: "http://127.0.0.1:9" }).healthz(), "closed port")).requestId, null, "client.network_error has no request id");
  ok("request ids");

  // Errors: the contract's codes, typed
  await expectCode(() => new Benchdata(base).getBenchmarks({ category: "saas" }), 401, "auth.missing_key", "no key");
  await expectCode(() => new Benchdata({ ...base, apiKey: "svc_test_" + "A".repeat(48) }).getBenchmarks({ category: "saas" }), 401, "auth.unknown_key", "unknown key");
  await expectCode(() => new Benchdata({ ...base, apiKey: "nope" }).getBenchmarks({ category: "saas" }), 401, "auth.malformed_key", "malformed key");
  await expectCode(() => data.getBenchmarks({ category: "toys" as never }), 422, "validation.invalid_category", "bad category");
  await expectCode(() => data.getDistribution({ category: "saas", metric: "gross_margin", buckets: 101 }), 422, "validation.out_of_range", "buckets");
  await expectCode(() => data.getPercentileRank({ category: "saas", metric: "bogus" as never, value: 1 }), 422, "validation.invalid_metric", "metric");
  await expectCode(() => data.getPercentileRank({ category: "saas" } as never), 422, "validation.missing_parameter", "missing parameter");
  await expectCode(() => data.getBenchmarks({ category: "saas", period: "1990-Q1" }), 404, "data.not_found", "no data");
  await expectCode(() => data.compareMerchant({ merchant_id: "nobody" }), 404, "not_found", "no merchant");
  const narrow = await console.createKey({ name: "benchmarks only", environment: "test", scopes: ["benchmarks:read"] });
  const scopeErr = await expectCode(() => new Benchdata({ ...base, apiKey: narrow.data.raw_key }).listSegments({ category: "saas" }), 403, "auth.insufficient_scope", "scope");
  assert(scopeErr.rateLimit !== null, "a refused data request still carries the rate-limit headers");
  await expectCode(() => new Benchdata({ ...base, sessionToken: "bds_sess_nope" }).listKeys(), 401, "console.invalid_session", "session");
  await expectCode(() => new Benchdata({ ...base, adminToken: "x".repeat(40) }).adminGetAccount(accountId), 401, "admin.invalid_token", "admin token");
  await expectCode(() => console.createKey({ name: "", environment: "test", scopes: ["benchmarks:read"] }), 422, "validation.invalid_body", "invalid body");
  await expectCode(() => admin.adminGetAccount("acc_01JD8Z0000000000000000000X"), 404, "not_found", "unknown account");
  ok("error codes");

  // Rotation and revocation
  const rotated = await console.rotateKey(narrow.data.key_id);
  assert(rotated.data.raw_key !== narrow.data.raw_key, "rotateKey");
  await expectCode(() => new Benchdata({ ...base, apiKey: narrow.data.raw_key }).getBenchmarks({ category: "saas" }), 401, "auth.inactive_key", "old key after rotation");
  equal((await console.revokeKey(narrow.data.key_id)).data.is_active, false, "revokeKey");
  await expectCode(() => console.rotateKey(narrow.data.key_id), 409, "console.key_revoked", "rotate revoked");
  ok("rotation and revocation");

  // Webhooks (a receiver that refuses connections: the test event fails, deliveries are listed)
  const hook = await console.createWebhook({ url: "http://127.0.0.1:9/hook", events: ["key.created"] });
  assert(hook.data.signing_secret.startsWith("whsec_"), "createWebhook secret");
  assert((await console.listWebhooks()).data.data.some((w) => w.webhook_id === hook.data.webhook_id), "listWebhooks");
  equal((await console.getWebhook(hook.data.webhook_id)).data.url, "http://127.0.0.1:9/hook", "getWebhook");
  const test = await console.testWebhooks();
  equal(test.data.results[0]?.ok, false, "testWebhooks to a closed port");
  await console.createKey({ name: "emits key.created", environment: "test", scopes: ["benchmarks:read"] });
  const deliveries = await console.listDeliveries(hook.data.webhook_id, { limit: 5 });
  const delivery = deliveries.data.data[0];
  assert(delivery !== undefined, "listDeliveries has the key.created delivery");
  equal((await console.retryDelivery(hook.data.webhook_id, delivery.delivery_id)).status, 202, "retryDelivery");
  equal((await console.enableWebhook(hook.data.webhook_id)).data.status, "active", "enableWebhook");
  // No event is that recent: nothing to recover (whatever the worker did with the retried delivery meanwhile).
  equal((await console.recoverWebhook(hook.data.webhook_id, { since: "2999-01-01T00:00:00Z" })).data.recovered, 0, "recoverWebhook");
  const newSecret = await console.rotateWebhookSecret(hook.data.webhook_id);
  assert(newSecret.data.signing_secret.startsWith("whsec_") && newSecret.data.signing_secret !== hook.data.signing_secret, "rotateWebhookSecret issues a new secret");
  assert(typeof newSecret.data.previous_secret_expires_at === "string", "rotateWebhookSecret says until when the old secret signs");
  equal((await console.deleteWebhook(hook.data.webhook_id)).data, undefined, "deleteWebhook (204)");
  await expectCode(() => console.getWebhook(hook.data.webhook_id), 404, "not_found", "deleted webhook");
  await expectCode(() => console.createWebhook({ url: "ftp://example.com/", events: ["key.created"] }), 422, "validation.invalid_url", "webhook url");
  ok("webhooks");

  // Billing
  assert(Array.isArray((await console.listInvoices()).data.data), "listInvoices");
  await expectCode(() => console.retryBilling(), 409, "billing.nothing_to_charge", "retryBilling");
  equal((await admin.adminReleaseChargeHold(accountId)).data.account_id, accountId, "adminReleaseChargeHold");
  ok("billing");

  // Rate limit: an account allowed one request a minute
  await admin.adminUpdateAccount(accountId, { limits: { per_minute: 1 } });
  const limited = await console.createKey({ name: "one a minute", environment: "test", scopes: ["benchmarks:read"] });
  const slow = new Benchdata({ ...base, apiKey: limited.data.raw_key });
  const first = await slow.getBenchmarks({ category: "saas" });
  equal([first.rateLimit?.limit, first.rateLimit?.remaining], [1, 0], "one a minute");
  const tooMany = await expectCode(() => slow.getBenchmarks({ category: "saas" }), 429, "rate_limit.exceeded", "429 without retry");
  assert(tooMany.retryAfter !== null && tooMany.retryAfter > 0 && tooMany.retryAfter <= 60, "Retry-After");
  equal(tooMany.rateLimit?.remaining, 0, "429 rate limit");
  // Retry on, but the wait it asks for is longer than allowed: one attempt, the 429 thrown.
  let attempts = 0;
  const counting = new Benchdata({ ...base, apiKey: limited.data.raw_key, retry: { maxRetries: 3, maxDelayMs: 10 }, fetch: (r) => (attempts++, fetch(r)) });
  await expectCode(() => counting.getBenchmarks({ category: "saas" }), 429, "rate_limit.exceeded", "429 with retry, wait too long");
  equal(attempts, 1, "no retry when Retry-After exceeds maxDelayMs");
  await admin.adminUpdateAccountPost(accountId, { limits: { per_minute: null } });
  ok("rate limits");

  // More codes a method can meet
  await expectCode(() => data.getPercentileRank({ category: "saas", metric: "cart_abandon_rate", value: 0.5 }), 422, "validation.metric_not_offered", "metric not offered");
  const liveKey = await console.createKey({ name: "live", environment: "live", scopes: ["benchmarks:read"] });
  await expectCode(() => new Benchdata({ ...base, apiKey: liveKey.data.raw_key }).getBenchmarks({ category: "saas" }), 403, "auth.environment_mismatch", "live key on a test deployment");
  await admin.adminUpdateAccount(accountId, { allowed_cidrs: ["10.0.0.0/8"] });
  await expectCode(() => data.getBenchmarks({ category: "saas" }), 403, "auth.ip_not_allowed", "outside the allowed ranges");
  await admin.adminUpdateAccount(accountId, { allowed_cidrs: [] });
  equal((await data.getBenchmarks({ category: "saas" })).status, 200, "allowed again");
  await expectCode(() => data.createMerchantSnapshot({ merchant_id: "big", category: "saas", period, metrics: { ["x".repeat(1_100_000)]: 1 } }), 413, "request.too_large", "body over 1 MB");
  await expectCode(() => new Benchdata(base).consoleSignIn({ token: "bds_link_" + "A".repeat(43) }), 401, "console.invalid_sign_in", "unknown sign-in link");
  const small = await admin.adminCreateAccount({ name: `small ${label}`, tier: "developer" });
  const smallConsole = new Benchdata({ ...base, sessionToken: small.data.session_token });
  await expectCode(() => smallConsole.createKey({ name: "too much", environment: "test", scopes: ["merchant:read"] }), 403, "console.scope_not_permitted", "scope beyond the tier");
  let full: BenchdataError | null = null;
  for (let i = 0; i < 100 && full === null; i++) {
    full = await smallConsole.createKey({ name: `k${i}`, environment: "test", scopes: ["benchmarks:read"] }).then(
      () => null,
      (e: unknown) => (e instanceof BenchdataError ? e : fail(String(e))),
    );
  }
  equal([full?.status, full?.code], [409, "console.limit_reached"], "key limit");
  ok("more error codes");

  // Suspension: the account's keys and console answer account.suspended until the operator resumes it
  const paused = await admin.adminCreateAccount({ name: `suspended ${label}`, tier: "developer" });
  const pausedConsole = new Benchdata({ ...base, sessionToken: paused.data.session_token });
  const pausedKey = await pausedConsole.createKey({ name: "k", environment: "test", scopes: ["benchmarks:read"] });
  const pausedData = new Benchdata({ ...base, apiKey: pausedKey.data.raw_key });
  equal((await pausedData.getBenchmarks({ category: "saas" })).status, 200, "before the suspension");
  const suspension = await admin.adminSuspendAccount(paused.data.account_id);
  equal([suspension.data.status, suspension.data.suspended_reason], ["suspended", null], "adminSuspendAccount without a body");
  await expectCode(() => pausedData.getBenchmarks({ category: "saas" }), 403, "account.suspended", "key of a suspended account");
  await expectCode(() => pausedConsole.listKeys(), 403, "account.suspended", "console of a suspended account");
  equal((await admin.adminSuspendAccount(paused.data.account_id, { reason: "again" })).data.suspended_reason, null, "suspending again changes nothing");
  equal((await admin.adminResumeAccount(paused.data.account_id)).data.status, "active", "adminResumeAccount");
  equal((await pausedData.getBenchmarks({ category: "saas" })).status, 200, "resumed");
  ok("suspension");

  // Accounts found, exported and erased: the erased account's key stops; its tombstone is listed only when asked for
  const listed = await admin.adminListAccounts({ q: `suspended ${label}`, limit: 10 });
  equal(listed.data.data.map((a) => a.account_id), [paused.data.account_id], "adminListAccounts by name");
  const exported = await admin.adminExportAccount(paused.data.account_id);
  equal([exported.data.format, exported.data.keys.map((k) => k.key_id)], ["benchdata.account-export/1", [pausedKey.data.key_id]], "adminExportAccount");
  const erased = await admin.adminDeleteAccount(paused.data.account_id);
  equal([erased.data.account_id, erased.data.deleted], [paused.data.account_id, true], "adminDeleteAccount");
  await expectCode(() => pausedData.getBenchmarks({ category: "saas" }), 401, "auth.unknown_key", "key of an erased account");
  await expectCode(() => admin.adminGetAccount(paused.data.account_id), 404, "not_found", "an erased account");
  equal((await admin.adminListAccounts({ q: `suspended ${label}` })).data.data, [], "a tombstone is not listed by default");
  equal((await admin.adminListAccounts({ status: "deleted", limit: 100 })).data.data.some((a) => a.account_id === paused.data.account_id), true, "status=deleted");
  ok("erasure");

  // The audit log: the operator reads who did what (the erasure above included); the account reads its own
  const trail = await admin.adminListAudit({ account_id: paused.data.account_id, limit: 100 });
  equal(trail.data.data.map((e) => e.action).slice(0, 3), ["account.delete", "account.export", "account.resume"], "adminListAudit, newest first");
  equal(trail.data.data.every((e) => e.account_id === paused.data.account_id && /^[0-9a-f]{64}$/.test(e.hash)), true, "adminListAudit filtered, chained");
  const own = await console.listAudit({ action: "key.create", limit: 1 });
  equal([own.data.data.length, own.data.data[0]?.action, own.data.has_more], [1, "key.create", true], "listAudit");
  const more = await console.listAudit({ action: "key.create", limit: 1, cursor: own.data.next_cursor ?? fail("next_cursor") });
  assert(more.data.data[0]!.id !== own.data.data[0]!.id, "listAudit's next page");
  await expectCode(() => admin.adminListAudit({ action: "key.steal" as never }), 422, "validation.invalid_parameter", "adminListAudit refuses an unknown action");
  ok("audit log");

  // Sessions: a sign-in link exchanged for a session, sign-out, the operator ends all sessions
  const link = await admin.adminCreateSignInLink(accountId);
  const token = link.data.sign_in_url.split("#sign-in=")[1] ?? fail("sign-in token in the link");
  const signedIn = await new Benchdata(base).consoleSignIn({ token });
  equal(signedIn.data.account_id, accountId, "consoleSignIn");
  const extra = await admin.adminCreateSession(accountId);
  const other = new Benchdata({ ...base, sessionToken: extra.data.session_token });
  equal((await other.consoleSignOut()).data.signed_out, true, "consoleSignOut");
  await expectCode(() => other.listKeys(), 401, "console.invalid_session", "signed out");
  assert((await admin.adminRevokeSessions(accountId)).data.revoked_sessions >= 1, "adminRevokeSessions");
  await expectCode(() => console.listKeys(), 401, "console.invalid_session", "sessions ended");
  ok("sessions");

  return { called: [...called].sort(), passed };
}
