// The whole benchdata app on Bun: createApp(...).fetch served by @benchdata/adapter-bun, memory storage.
import { createMemoryStorage, defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";
import { serve } from "../src/index.ts";

const app = createApp({ storage: createMemoryStorage(), config: defineConfig({ target: "test" }), adminToken: "bun-admin" });
const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
console.log(`listening ${server.port}`);
process.on("SIGTERM", () => void server.stop().then(() => process.exit(0)));
