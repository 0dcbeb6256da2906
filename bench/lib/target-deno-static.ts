// The static route on Deno.serve: Deno's floor (run with the deno binary, not node).
import { staticHeaders, staticJson } from "./static-json.ts";

declare const Deno: { serve(options: { port: number; hostname: string; onListen(addr: { port: number }): void }, handler: () => Response): { shutdown(): Promise<void> } };

const server = Deno.serve({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1", onListen: ({ port }) => console.log(`listening ${port}`) }, () => new Response(staticJson, { headers: staticHeaders }));
process.on("SIGTERM", () => {
  void server.shutdown().then(() => process.exit(0));
});
