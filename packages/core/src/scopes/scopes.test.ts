import { describe, expect, it } from "vitest";
import { checkScopes, ENDPOINT_SCOPES, scopesBeyondTier, scopesForTier, tierPermits } from "./scopes.ts";

describe("scopes and tiers", () => {
  it("follows the spec's table: each tier holds its scopes and those of lower tiers", () => {
    expect(scopesForTier("developer")).toEqual(["benchmarks:read", "segments:read"]);
    expect(scopesForTier("startup")).toEqual(["benchmarks:read", "segments:read", "merchant:read"]);
    expect(scopesForTier("growth")).toEqual(["benchmarks:read", "segments:read", "merchant:read", "merchant:write", "insights:read", "compare:read"]);
    expect(scopesForTier("enterprise")).toHaveLength(9);
    expect(tierPermits("growth", "score:read")).toBe(false);
  });

  it("merchant/compare needs both merchant:read and compare:read (the contract's reading)", () => {
    expect(ENDPOINT_SCOPES["GET /merchant/compare"]).toEqual(["merchant:read", "compare:read"]);
    expect(checkScopes(["merchant:read"], ENDPOINT_SCOPES["GET /merchant/compare"])).toEqual(["compare:read"]);
    expect(checkScopes(["compare:read", "merchant:read"], ENDPOINT_SCOPES["GET /merchant/compare"])).toEqual([]);
  });

  it("every benchmark endpoint needs benchmarks:read", () => {
    for (const e of ["GET /benchmarks", "GET /benchmarks/percentile", "GET /benchmarks/distribution", "GET /benchmarks/history"] as const) {
      expect(ENDPOINT_SCOPES[e]).toEqual(["benchmarks:read"]);
      expect(checkScopes(["segments:read"], ENDPOINT_SCOPES[e])).toEqual(["benchmarks:read"]);
    }
  });

  it("names scopes a tier does not permit, unknown strings included", () => {
    expect(scopesBeyondTier("developer", ["benchmarks:read", "merchant:read", "bogus:thing"])).toEqual(["merchant:read", "bogus:thing"]);
    expect(scopesBeyondTier("enterprise", ["export:read"])).toEqual([]);
  });
});
