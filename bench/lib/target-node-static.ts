// The static route through @benchdata/adapter-node: a Web handler building `new Response(json, { headers })`.
import { serve } from "../../packages/adapter-node/src/serve.ts";
import { staticHeaders, staticJson } from "./static-json.ts";
import { saveProfile } from "./profile-hook.ts";

const handle = await serve({
  port: Number(process.env.PORT ?? 0),
  host: "127.0.0.1",
  // BENCH_LIGHT_RESPONSE=0 measures the bridge with the runtime's own Response class.
  lightResponse: process.env.BENCH_LIGHT_RESPONSE !== "0",
  fetch: () => new Response(staticJson, { headers: staticHeaders }),
});
console.log(`listening ${handle.port}`);
process.on("SIGTERM", () => {
  void saveProfile()
    .then(() => handle.close())
    .then(() => process.exit(0));
});
