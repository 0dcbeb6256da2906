/**
 * Runs the receiver on node:http. `WEBHOOK_SECRET=whsec_… PORT=8787 npx tsx server.ts` (or `npm start`
 * in this folder after `npm run build` at the root); every new event is printed as one JSON line.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Receiver } from "./receiver.ts";
import { createReceiver } from "./receiver.ts";

/** A listening receiver. */
export interface RunningReceiver {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a fetch-handler receiver on node:http (the raw body is handed over untouched). */
export async function serveReceiver(receiver: Receiver, options: { port?: number; host?: string } = {}): Promise<RunningReceiver> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      const method = req.method ?? "GET";
      const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
        method,
        headers,
        ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) }),
      });
      try {
        const response = await receiver.fetch(request);
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      } catch {
        res.writeHead(500).end();
      }
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((ok) => server.listen(options.port ?? 0, host, ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error("Set WEBHOOK_SECRET to the webhook's signing_secret (whsec_…).");
    process.exit(1);
  }
  const running = await serveReceiver(
    createReceiver({ secret, onEvent: (event) => console.log(JSON.stringify({ received: event.type, id: event.id, data: event.data })) }),
    { port: Number(process.env.PORT ?? 8787), host: process.env.HOST ?? "127.0.0.1" },
  );
  console.log(`benchdata webhook receiver listening on ${running.url}`);
  process.on("SIGTERM", () => void running.close().then(() => process.exit(0)));
  process.on("SIGINT", () => void running.close().then(() => process.exit(0)));
}
