// Diagnostic target: no core, but a request/response shaped like the pipeline's: the handler reads the
// Authorization header and the query string, awaits once, and answers a 352-byte JSON body with the four
// headers a data response carries. Its cost over the static route is the bridge's share of a data request.
import { serve } from "../../packages/adapter-node/src/serve.ts";
import { saveProfile } from "./profile-hook.ts";

const body = JSON.stringify({ metric: "gross_margin", value: 0.7, category: "saas", segment: "all", period: "2026-Q3", percentile: 41.2, interpretation: "x".repeat(160), context: { p50: 0.7192, p75: 0.77065, p90: 0.81955 } });
let n = 0;
const handle = await serve({
  port: Number(process.env.PORT ?? 0),
  host: "127.0.0.1",
  fetch: async (request) => {
    const auth = request.headers.get("authorization");
    const url = request.url;
    const q = url.indexOf("?");
    n += (auth?.length ?? 0) + (q > 0 ? url.length - q : 0);
    await Promise.resolve();
    return new Response(body, {
      status: 200,
      headers: { "content-type": "application/json", "x-ratelimit-limit": "1000", "x-ratelimit-remaining": String(999 - (n % 100)), "x-ratelimit-reset": String(1795318879 + (n % 60)) },
    });
  },
});
console.log(`listening ${handle.port}`);
process.on("SIGTERM", () => {
  void saveProfile()
    .then(() => handle.close())
    .then(() => process.exit(0));
});
