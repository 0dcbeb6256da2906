// The static route on Bun through @benchdata/adapter-bun (run with the bun binary, not node).
import { serve } from "../../packages/adapter-bun/src/serve.ts";
import { staticHeaders, staticJson } from "./static-json.ts";

const handle = serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch: () => new Response(staticJson, { headers: staticHeaders }),
});
console.log(`listening ${handle.port}`);
process.on("SIGTERM", () => {
  void handle.stop().then(() => process.exit(0));
});
