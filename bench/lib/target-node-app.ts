// The full pipeline on node:http: createApp (memory, SQLite or PostgreSQL storage) served by
// @benchdata/adapter-node. Before listening it seeds enterprise accounts and test keys through the admin
// and console APIs and writes the raw keys (JSON array) to BENCH_KEYS_FILE, for the load generator to rotate.
//
//   BENCH_STORAGE=memory|sqlite|postgres  BENCH_KEYS (500)
//   BENCH_ENVIRONMENT=test (default: test keys, synthetic data, never billed) | live (live keys on a live-target
//   deployment: every request also counts quota, as paying traffic does; the queried cell is imported first)
//   BENCH_DB_URL (sqlite:PATH or postgres://…), or BENCH_SQLITE_DIR: a fresh SQLite file there per process
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Storage } from "@benchdata/core";
import { createMemoryStorage, createSyntheticSource, defineConfig, SYNTHETIC_LATEST_QUARTER } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { openStorage } from "@benchdata/storage-kysely";
import { hashSecretNode } from "../../packages/adapter-node/src/hash-secret-node.ts";
import { serve } from "../../packages/adapter-node/src/serve.ts";
import { seedKeys } from "./seed-keys.ts";
import { saveProfile } from "./profile-hook.ts";

const kind = process.env.BENCH_STORAGE ?? "memory";
const dir = process.env.BENCH_SQLITE_DIR;
const url = kind === "sqlite" && dir !== undefined ? `sqlite:${join(dir, `http-${process.pid}.db`)}` : (process.env.BENCH_DB_URL as string);
const storage: Storage = kind === "memory" ? createMemoryStorage() : await openStorage(url);
await storage.migrate();
const adminToken = "bench-admin-token";
const environment = process.env.BENCH_ENVIRONMENT === "live" ? "live" : "test";
if (environment === "live") {
  // Live keys read imported cells: publish the one the benchmark request asks for (the synthetic one's values).
  const cells = await createSyntheticSource("bench").cells("saas", "all", SYNTHETIC_LATEST_QUARTER, ["gross_margin"]);
  const cell = cells.get("gross_margin");
  if (cell === undefined) throw new Error("no synthetic saas gross_margin cell to publish");
  await storage.replaceCells([{ category: "saas", segment: "all", period: SYNTHETIC_LATEST_QUARTER, metric: "gross_margin", cell }], []);
}
// Test keys on a test-target deployment: the synthetic dataset, rate limited, never billed (live: also quota).
// Configured as `benchdata serve` configures it (the native SHA-256 included).
const app = createApp({ storage, config: defineConfig({ target: environment }), adminToken, hashSecret: hashSecretNode });
const keys = await seedKeys({ fetch: app.fetch, adminToken, keys: Number(process.env.BENCH_KEYS ?? 500), environment });
writeFileSync(process.env.BENCH_KEYS_FILE as string, JSON.stringify(keys));

const handle = await serve({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1", fetch: app.fetch, onClose: () => storage.close() });
console.log(`listening ${handle.port}`);
process.on("SIGTERM", () => {
  void saveProfile()
    .then(() => handle.close())
    .then(() => process.exit(0));
});
