/** A TCP proxy a test can take down and bring back, to play a database that goes away and returns. */
import net from "node:net";

/** A running proxy to `target`. */
export interface TcpProxy {
  readonly port: number;
  /** Stops listening and cuts every open connection. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy on a free local port forwarding to `host:port`. */
export async function startTcpProxy(host: string, port: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  const listen = (p: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(p, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
    });
  const proxyPort = await listen(0);
  const down = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    if (server.listening) await new Promise<void>((r) => server.close(() => r()));
  };
  return {
    port: proxyPort,
    down,
    up: async () => {
      await listen(proxyPort);
    },
    close: down,
  };
}
