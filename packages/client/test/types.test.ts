// Type-level pins, checked by `npm run typecheck` (tsc on this file): a schema change that breaks users' code
// fails the build here. At run time these are no-ops apart from the exhaustive switch.
import { describe, expectTypeOf, it } from "vitest";
import type { BenchdataError, BenchdataResponse, DataOf, ErrorCode, QueryOf, RateLimit, WebhookEvent } from "../src/index.ts";
import { Benchdata, ERROR_CODES } from "../src/index.ts";

/** An exhaustive switch over the contract's codes: adding a code without handling it is a compile error here. */
function describeCode(code: BenchdataError["code"]): string {
  switch (code) {
    case "rate_limit.exceeded":
      return "slow down";
    case "quota.exhausted":
    case "quota.held":
      return "pay";
    case "client.timeout":
    case "client.aborted":
    case "client.network_error":
    case "client.invalid_response":
      return "transport";
    default: {
      const rest: Exclude<ErrorCode, "rate_limit.exceeded" | "quota.exhausted" | "quota.held"> = code;
      return rest;
    }
  }
}

describe("types", () => {
  it("err.code is the union of the contract's codes plus the client's own, and switch narrows it", () => {
    expectTypeOf<BenchdataError["code"]>().toEqualTypeOf<ErrorCode | "client.timeout" | "client.aborted" | "client.network_error" | "client.invalid_response">();
    expectTypeOf<"auth.unknown_key">().toMatchTypeOf<ErrorCode>();
    expectTypeOf<"auth.made_up">().not.toMatchTypeOf<ErrorCode>();
    expectTypeOf<(typeof ERROR_CODES)[number]>().toEqualTypeOf<ErrorCode>();
    describeCode("rate_limit.exceeded");
  });

  it("responses: data typed per operation, rate limit on every response", () => {
    const bd = new Benchdata({ baseUrl: "http://x" });
    expectTypeOf(bd.getBenchmarks).returns.resolves.toEqualTypeOf<BenchdataResponse<DataOf<"getBenchmarks">>>();
    expectTypeOf<DataOf<"getBenchmarks">["metrics"][string]>().toEqualTypeOf<{ p10: number; p25: number; p50: number; p75: number; p90: number; mean: number }>();
    expectTypeOf<DataOf<"getPercentileRank">["percentile"]>().toEqualTypeOf<number>();
    expectTypeOf<DataOf<"getDistribution">["histogram"][number]["count"]>().toEqualTypeOf<number>();
    expectTypeOf<DataOf<"createKey">["raw_key"]>().toEqualTypeOf<string>();
    expectTypeOf<DataOf<"exportXbrl">>().toEqualTypeOf<string>();
    expectTypeOf<DataOf<"deleteWebhook">>().toEqualTypeOf<undefined>();
    expectTypeOf<BenchdataResponse<unknown>["rateLimit"]>().toEqualTypeOf<RateLimit | null>();
    expectTypeOf<BenchdataResponse<unknown>["requestId"]>().toEqualTypeOf<string | null>();
    expectTypeOf<BenchdataError["requestId"]>().toEqualTypeOf<string | null>();
  });

  it("parameters: required query parameters and enums are enforced", () => {
    expectTypeOf<QueryOf<"getBenchmarks">["category"]>().toEqualTypeOf<"ecommerce" | "saas" | "marketplace" | "retail" | "fintech" | "food_beverage" | "health_wellness">();
    const bd = new Benchdata({ baseUrl: "http://x" });
    // @ts-expect-error category is required
    void (() => bd.getBenchmarks({}));
    // @ts-expect-error not a category
    void (() => bd.getBenchmarks({ category: "toys" }));
    // @ts-expect-error rotateKey takes the key id
    void (() => bd.rotateKey());
  });

  it("webhook events: a union over the event types, data narrowed by type", () => {
    // The spec's seven are there (extensions may add more).
    expectTypeOf<"key.created" | "key.rotated" | "key.revoked" | "quota.warning" | "quota.exhausted" | "invoice.paid" | "invoice.failed">().toMatchTypeOf<WebhookEvent["type"]>();
    expectTypeOf<"key.exploded">().not.toMatchTypeOf<WebhookEvent["type"]>();
    const take = (e: WebhookEvent): void => {
      if (e.type === "invoice.failed") expectTypeOf(e.data.failure_reason).toEqualTypeOf<string>();
    };
    void take;
  });
});
