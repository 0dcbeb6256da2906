// Seeds API keys into a running app through its own admin and console APIs (app.fetch, no server), so the
// load targets exercise the same paths as a real operator. Runtime-agnostic: runs on Node and on Bun.

/** What `seedKeys` needs: an app's fetch and its admin token. */
export interface SeedOptions {
  fetch(request: Request): Promise<Response>;
  adminToken: string;
  /** How many keys in all. */
  keys: number;
  environment: "live" | "test";
  /** Keys per account (the default `keys.maxPerAccount` is 50). */
  keysPerAccount?: number;
  tier?: "developer" | "startup" | "growth" | "enterprise";
}

async function call(fetch: SeedOptions["fetch"], path: string, token: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(
    new Request(`http://bench.local${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status !== 201) throw new Error(`seeding: POST ${path} answered ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates accounts of a tier (enterprise by default) and `keys` keys with `benchmarks:read`; returns the raw keys. */
export async function seedKeys(options: SeedOptions): Promise<string[]> {
  const perAccount = options.keysPerAccount ?? 50;
  const raw: string[] = [];
  for (let a = 0; raw.length < options.keys; a++) {
    const account = await call(options.fetch, "/api/v1/admin/accounts", options.adminToken, { name: `bench ${a}`, tier: options.tier ?? "enterprise" });
    const session = account.session_token as string;
    for (let k = 0; k < perAccount && raw.length < options.keys; k++) {
      const key = await call(options.fetch, "/api/v1/console/keys", session, { name: `bench ${a}.${k}`, environment: options.environment, scopes: ["benchmarks:read"] });
      raw.push(key.raw_key as string);
    }
  }
  return raw;
}
