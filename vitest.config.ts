import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the sources, so a test never sees a stale build.
    alias: [
      { find: /^@benchdata\/core\/http$/, replacement: src("./packages/core/src/http/index.ts") },
      { find: /^@benchdata\/core\/testing$/, replacement: src("./packages/core/src/testing/index.ts") },
      { find: /^@benchdata\/core$/, replacement: src("./packages/core/src/index.ts") },
      { find: /^@benchdata\/storage-kysely$/, replacement: src("./packages/storage-kysely/src/index.ts") },
      { find: /^@benchdata\/adapter-node$/, replacement: src("./packages/adapter-node/src/index.ts") },
      { find: /^@benchdata\/adapter-bun$/, replacement: src("./packages/adapter-bun/src/index.ts") },
      { find: /^@benchdata\/adapter-deno$/, replacement: src("./packages/adapter-deno/src/index.ts") },
      { find: /^@benchdata\/console$/, replacement: src("./packages/console/src/index.ts") },
      { find: /^@benchdata\/client$/, replacement: src("./packages/client/src/index.ts") },
    ],
  },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "examples/*/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", "./scripts/summary-reporter.ts"],
  },
});
