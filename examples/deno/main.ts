// benchdata on Deno: `deno run --allow-net --allow-env --allow-read examples/deno/main.ts`
// The same app as on Node and Bun: createApp(...).fetch handed to Deno.serve through @benchdata/adapter-deno.
// Storage is in memory here; test keys read the built-in synthetic dataset. Set BENCHDATA_ADMIN_TOKEN to turn
// the admin API on.
import { serve } from "@benchdata/adapter-deno";
import { createMemoryStorage, defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";

declare const Deno: {
  env: { get(name: string): string | undefined };
  addSignalListener(signal: "SIGTERM" | "SIGINT", fn: () => void): void;
};

const app = createApp({
  storage: createMemoryStorage(),
  config: defineConfig({ target: (Deno.env.get("BENCHDATA_TARGET") as "live" | "test" | "host" | undefined) ?? "test" }),
  adminToken: Deno.env.get("BENCHDATA_ADMIN_TOKEN") ?? null,
});

const server = serve({ fetch: app.fetch, port: Number(Deno.env.get("PORT") ?? 8788), hostname: "127.0.0.1" });
console.log(`listening ${server.port} on 127.0.0.1`);

// SIGTERM or Ctrl-C: stop accepting, answer the requests in flight, then the process ends.
for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => void server.stop());
