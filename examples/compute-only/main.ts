// benchdata's core used for computation only: no server, no storage. Run: npx tsx examples/compute-only/main.ts
import {
  checkScopes,
  cryptoRandom,
  EMPTY_QUOTA,
  ENDPOINT_SCOPES,
  generateApiKey,
  histogram,
  parseApiKey,
  percentileRank,
  percentileSet,
  quotaRequest,
  signatureHeader,
  slidingWindow,
  verifySignature,
} from "@benchdata/core";
import type { QuotaPlan, QuotaState } from "@benchdata/core";

/** Runs each computation once and returns what it found (the test checks these). */
export function main(): Record<string, unknown> {
  // Keys: generate, parse strictly, check scopes.
  const key = generateApiKey("test", cryptoRandom);
  const parsed = parseApiKey(key.raw);
  const missing = checkScopes(["benchmarks:read"], ENDPOINT_SCOPES["GET /merchant/compare"]);

  // A sliding window of 3 per minute: the 4th request inside the minute is refused, with the exact wait.
  let log: number[] = [];
  const decisions = [0, 1_000, 2_000, 3_000].map((t) => {
    const d = slidingWindow(log, t, 3, 60_000);
    if (d.allowed) log = d.stamps;
    return { at: t, allowed: d.allowed, remaining: d.remaining, retryAfterMs: d.retryAfterMs };
  });

  // The quota machine: 20 calls included, the 21st request exhausts the quota and starts one charge.
  const plan: QuotaPlan = { baseQuota: 20, blockSize: 10, blockPrice: 1000, retryAfterFailureMs: 3_600_000, maxAutoCharges: 10 };
  let state: QuotaState = EMPTY_QUOTA;
  let warnedAt: number | null = null;
  let exhaustedAt: number | null = null;
  for (let i = 1; i <= 21; i++) {
    const step = quotaRequest(plan, state, i);
    if (step.kind === "allow" && step.warn !== null) warnedAt = i;
    if (step.kind === "exhausted" && step.charge) exhaustedAt = i;
    state = step.state;
  }

  // Statistics on a sorted sample.
  const margins = Float64Array.from([0.52, 0.61, 0.64, 0.68, 0.71, 0.73, 0.75, 0.78, 0.81, 0.9]);
  const set = percentileSet(margins);
  const rank = percentileRank(margins, 0.7);
  const hist = histogram(margins, 4);

  // Webhook signatures, as a receiver verifies them.
  const body = JSON.stringify({ id: "evt_1", type: "quota.warning" });
  const header = signatureHeader("whsec_example", body);
  const valid = verifySignature("whsec_example", body, header);
  const tampered = verifySignature("whsec_example", body + " ", header);

  return { keyPrefix: key.prefix, environment: parsed?.environment, missing, decisions, warnedAt, exhaustedAt, set, rank, hist, valid, tampered };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(main(), null, 2));
}
