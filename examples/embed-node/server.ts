// An existing node:http application that mounts benchdata under /benchmarks-api and signs its own users
// into benchdata's console: no benchdata session tokens, the host app's login cookie decides.
// Run: npx tsx examples/embed-node/server.ts   (then open http://127.0.0.1:8789/)
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bridge, hashSecretNode } from "@benchdata/adapter-node";
import { createMemoryStorage, cryptoRandom, defineConfig, newId, systemClock } from "@benchdata/core";
import type { Storage, Tier } from "@benchdata/core";
import { createApp } from "@benchdata/core/http";

const PREFIX = "/benchmarks-api";

/** The host application's own users, each tied to one benchdata account. */
interface User {
  readonly name: string;
  readonly accountId: string;
}

function cookie(header: string | null | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

/** Creates a benchdata account for one of the host's users, straight through the storage contract. */
async function provision(storage: Storage, name: string, tier: Tier): Promise<User> {
  const accountId = newId("acc", systemClock, cryptoRandom);
  await storage.createAccount({ id: accountId, name, tier, createdAt: Date.now(), limits: {}, allowedCidrs: [], billing: {} });
  return { name, accountId };
}

/** Starts the host application; resolves once it listens. */
export async function start(port = 8789): Promise<{ url: string; server: Server; users: Map<string, User> }> {
  const storage = createMemoryStorage();
  const users = new Map<string, User>();
  for (const [name, tier] of [["alice", "growth"], ["bob", "developer"]] as const) users.set(name, await provision(storage, name, tier));

  const benchdata = createApp({
    storage,
    config: defineConfig({ target: "test" }),
    hashSecret: hashSecretNode, // node:crypto's SHA-256 for the key presented on every request
    // The embedder's console authentication: the host app's login cookie names the user, the user names the account.
    consoleAuth: (request) => users.get(cookie(request.headers.get("cookie"), "host_user") ?? "")?.accountId ?? null,
  });
  const mounted = bridge(benchdata.fetch);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    if (url === PREFIX || url.startsWith(`${PREFIX}/`) || url.startsWith(`${PREFIX}?`)) {
      // benchdata sees its own paths: strip the mount prefix.
      req.url = url.slice(PREFIX.length) || "/";
      mounted(req, res);
      return;
    }
    if (url.startsWith("/login/")) {
      const name = url.slice("/login/".length);
      if (!users.has(name)) {
        res.writeHead(404).end("no such user");
        return;
      }
      res.writeHead(204, { "set-cookie": `host_user=${encodeURIComponent(name)}; Path=/; HttpOnly; SameSite=Lax` }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end(`host app home; benchdata is mounted at ${PREFIX}\n`);
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${bound}`, server, users };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await start(Number(process.env.PORT ?? 8789));
  console.log(`host app on ${url}; benchdata at ${url}${PREFIX} (log in with ${url}/login/alice)`);
}
