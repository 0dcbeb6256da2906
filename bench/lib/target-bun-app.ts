// The full pipeline (memory storage) on Bun through @benchdata/adapter-bun; seeds keys like target-node-app.ts.
import { writeFileSync } from "node:fs";
import { createMemoryStorage, defineConfig } from "../../packages/core/src/index.ts";
import { createApp } from "../../packages/core/src/http/index.ts";
import { serve } from "../../packages/adapter-bun/src/serve.ts";
import { seedKeys } from "./seed-keys.ts";

const adminToken = "bench-admin-token";
const app = createApp({ storage: createMemoryStorage(), config: defineConfig({ target: "test" }), adminToken });
const keys = await seedKeys({ fetch: app.fetch, adminToken, keys: Number(process.env.BENCH_KEYS ?? 500), environment: "test" });
writeFileSync(process.env.BENCH_KEYS_FILE as string, JSON.stringify(keys));

const handle = serve({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1", fetch: app.fetch });
console.log(`listening ${handle.port}`);
process.on("SIGTERM", () => {
  void handle.stop().then(() => process.exit(0));
});
