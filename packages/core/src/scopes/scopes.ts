/** The spec's scope table as data: which scopes each endpoint needs, and which tier each scope requires. */

/** Account tiers, lowest first. */
export const TIERS = ["developer", "startup", "growth", "enterprise"] as const;

/** An account tier. */
export type Tier = (typeof TIERS)[number];

/** Every scope a key may carry. */
export const SCOPES = [
  "benchmarks:read",
  "segments:read",
  "merchant:read",
  "merchant:write",
  "insights:read",
  "compare:read",
  "score:read",
  "report:read",
  "export:read",
] as const;

/** A scope `resource:action`. */
export type Scope = (typeof SCOPES)[number];

/** The lowest tier allowed to hold each scope. */
export const SCOPE_MIN_TIER: { readonly [S in Scope]: Tier } = {
  "benchmarks:read": "developer",
  "segments:read": "developer",
  "merchant:read": "startup",
  "merchant:write": "growth",
  "insights:read": "growth",
  "compare:read": "growth",
  "score:read": "enterprise",
  "report:read": "enterprise",
  "export:read": "enterprise",
};

/** A data endpoint, named by method and path under `/data/v1`. */
export type Endpoint =
  | "GET /benchmarks"
  | "GET /benchmarks/percentile"
  | "GET /benchmarks/distribution"
  | "GET /benchmarks/history"
  | "GET /segments"
  | "GET /segments/breakdown"
  | "GET /merchant/vcfs"
  | "POST /merchant/vcfs"
  | "GET /merchant/compare"
  | "GET /merchant/insights"
  | "GET /merchant/score"
  | "GET /report"
  | "GET /export/xbrl";

/**
 * The scopes each endpoint needs. `GET /merchant/compare` stands in two rows of the spec's table, so it
 * needs both `merchant:read` and `compare:read` (the contract's reading).
 */
export const ENDPOINT_SCOPES: { readonly [E in Endpoint]: readonly Scope[] } = {
  "GET /benchmarks": ["benchmarks:read"],
  "GET /benchmarks/percentile": ["benchmarks:read"],
  "GET /benchmarks/distribution": ["benchmarks:read"],
  "GET /benchmarks/history": ["benchmarks:read"],
  "GET /segments": ["segments:read"],
  "GET /segments/breakdown": ["segments:read"],
  "GET /merchant/vcfs": ["merchant:read"],
  "POST /merchant/vcfs": ["merchant:write"],
  "GET /merchant/compare": ["merchant:read", "compare:read"],
  "GET /merchant/insights": ["insights:read"],
  "GET /merchant/score": ["score:read"],
  "GET /report": ["report:read"],
  "GET /export/xbrl": ["export:read"],
};

/** Whether `value` is a known scope. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Whether `value` is a known tier. */
export function isTier(value: string): value is Tier {
  return (TIERS as readonly string[]).includes(value);
}

/** Whether `tier` may hold `scope`. */
export function tierPermits(tier: Tier, scope: Scope): boolean {
  return TIERS.indexOf(tier) >= TIERS.indexOf(SCOPE_MIN_TIER[scope]);
}

/** The scopes a tier may hold. */
export function scopesForTier(tier: Tier): Scope[] {
  return SCOPES.filter((s) => tierPermits(tier, s));
}

/** The scopes in `required` that `held` lacks (empty when the key may proceed). */
export function checkScopes(held: readonly string[], required: readonly Scope[]): Scope[] {
  return required.filter((s) => !held.includes(s));
}

/** The scopes in `requested` that `tier` does not permit (unknown strings included, as given). */
export function scopesBeyondTier(tier: Tier, requested: readonly string[]): string[] {
  return requested.filter((s) => !isScope(s) || !tierPermits(tier, s));
}
