// benchdata on Deno: `deno run --allow-net --allow-env --allow-read examples/deno/main.ts`
// The same app as on Node and Bun: createApp(...).fetch handed to Deno.serve. Storage is in memory here;
// test keys read the built-in synthetic dataset. Set BENCHDATA_ADMIN_TOKEN to turn the admin API on.
import { createMemoryStorage, defineConfig } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";

declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname: string; onListen(addr: { port: number; hostname: string }): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void> };
  addSignalListener(signal: "SIGTERM" | "SIGINT", fn: () => void): void;
};

const app = createApp({
  storage: createMemoryStorage(),
  config: defineConfig({ target: (Deno.env.get("BENCHDATA_TARGET") as "live" | "test" | "host" | undefined) ?? "test" }),
  adminToken: Deno.env.get("BENCHDATA_ADMIN_TOKEN") ?? null,
});

const server = Deno.serve(
  {
    port: Number(Deno.env.get("PORT") ?? 8788),
    hostname: "127.0.0.1",
    onListen: ({ port, hostname }) => console.log(`listening ${port} on ${hostname}`),
  },
  (request, info) => app.fetch(request, { clientAddress: info.remoteAddr.hostname }),
);

for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => void server.shutdown());
await server.finished;
