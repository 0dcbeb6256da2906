// Run by serve.test.ts under the real Deno runtime: serves a tiny handler, prints "listening <port>", and on
// SIGTERM stops gracefully and prints "stopped".
import { serve } from "../src/serve.ts";

declare const Deno: {
  env: { get(name: string): string | undefined };
  addSignalListener(signal: "SIGTERM", fn: () => void): void;
  exit(code: number): never;
};

const handle = serve({
  port: 0,
  hostname: "127.0.0.1",
  drainTimeout: Number(Deno.env.get("DRAIN_TIMEOUT") ?? 10_000),
  onError: () => {},
  onClose: async () => {
    console.log("closed");
  },
  fetch: async (request, context) => {
    const url = new URL(request.url);
    if (url.pathname === "/throw") throw new Error("secret stack detail");
    if (url.pathname === "/hang") await new Promise(() => {});
    if (url.pathname === "/slow") await new Promise((resolve) => setTimeout(resolve, 300));
    if (url.pathname === "/echo") return Response.json(await request.json());
    return Response.json({ clientAddress: context.clientAddress, method: request.method, path: url.pathname }, { headers: { "x-runtime": "deno" } });
  },
});
console.log(`listening ${handle.port} ${handle.url}`);
Deno.addSignalListener("SIGTERM", () => {
  void handle.stop().then(() => {
    console.log("stopped");
    Deno.exit(0);
  });
});
