// Run by serve.test.ts under the real Bun runtime: serves a tiny app, prints "listening <port>",
// and on the line "stop" on stdin stops gracefully and prints "stopped".
import { serve } from "../src/serve.ts";
import { readJson } from "../../core/src/http/read-json-body.ts";

const handle = serve({
  port: 0,
  hostname: "127.0.0.1",
  drainTimeout: Number(process.env.DRAIN_TIMEOUT ?? 10_000),
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
    // Answers before the body is in: at once (as for a Content-Length over the limit), or after reading 1 MB of it.
    if (url.pathname === "/refuse") return new Response('{"code":"request.too_large"}', { status: 413 });
    if (url.pathname === "/json") {
      try {
        return Response.json(await readJson(request));
      } catch {
        return new Response('{"code":"request.too_large"}', { status: 413 });
      }
    }
    const headers = new Headers({ "content-type": "application/json", "x-runtime": "bun" });
    headers.append("set-cookie", "a=1");
    headers.append("set-cookie", "b=2");
    return new Response(
      JSON.stringify({ clientAddress: context.clientAddress, method: request.method, path: url.pathname }),
      { headers },
    );
  },
});
console.log(`listening ${handle.port}`);

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  if (!chunk.includes("stop")) return;
  void handle.stop().then(() => {
    console.log("stopped");
    process.exit(0);
  });
});
