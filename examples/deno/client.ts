// A Deno program calling benchdata through @benchdata/client (Web APIs only, so the same package as on Node):
//   deno run --allow-net --allow-env examples/deno/client.ts   (BENCHDATA_URL, BENCHDATA_ADMIN_TOKEN)
// It bootstraps an account with the admin token, creates a test key in the console and queries a benchmark.
import { Benchdata, BenchdataError } from "@benchdata/client";

declare const Deno: { env: { get(name: string): string | undefined }; exit(code: number): never };

const baseUrl = Deno.env.get("BENCHDATA_URL") ?? "http://127.0.0.1:8788";
const admin = new Benchdata({ baseUrl, adminToken: Deno.env.get("BENCHDATA_ADMIN_TOKEN") ?? "" });

try {
  const account = await admin.adminCreateAccount({ name: "Deno client", tier: "developer" });
  const console_ = new Benchdata({ baseUrl, sessionToken: account.data.session_token });
  const key = await console_.createKey({ name: "deno", environment: "test", scopes: ["benchmarks:read"] });
  const data = new Benchdata({ baseUrl, apiKey: key.data.raw_key, timeoutMs: 10_000 });
  const { data: rank, rateLimit } = await data.getPercentileRank({ category: "saas", metric: "churn_rate", value: 0.03 });
  console.log(JSON.stringify({ percentile: rank.percentile, interpretation: rank.interpretation, remaining: rateLimit?.remaining }));
  // Errors carry the contract's code.
  await data.listSegments({ category: "saas" }).catch((err: unknown) => {
    if (err instanceof BenchdataError && err.code === "auth.insufficient_scope") console.log(JSON.stringify({ refused: err.code, status: err.status }));
    else throw err;
  });
} catch (err) {
  console.error(err instanceof BenchdataError ? `${err.status} ${err.code}: ${err.detail}` : err);
  Deno.exit(1);
}
