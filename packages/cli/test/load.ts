// A small load generator for the fault tests: a few keep-alive connections sending one request after another,
// recording every answer and every connection error. With `followReadiness` it behaves like a load balancer:
// it polls /readyz and, once that is not 200, opens no connection and sends nothing more to the instance.
import { Agent, request } from "node:http";
import type { ClientRequest } from "node:http";
import { createConnection } from "node:net";
import type { NetConnectOpts, Socket } from "node:net";

/** One answered request. */
export interface Answer {
  readonly at: number;
  readonly status: number;
  readonly code: string | undefined;
  readonly connection: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: string | undefined;
}

/** What a run of load produced. */
export interface LoadReport {
  readonly answers: Answer[];
  /** Connection errors by code (ECONNRESET, ECONNREFUSED…): requests sent that got no answer. */
  readonly errors: Record<string, number>;
  /** When the generator saw /readyz turn away (ms since epoch), if it did. */
  readonly unroutableAt: number | null;
  /** Count of answers with this status. */
  count(status: number): number;
}

/** A running load. */
export interface Load {
  /** Whether the balancer still sends to the instance. */
  readonly routable: boolean;
  /** Stops sending, waits for the requests in flight, and reports. */
  stop(): Promise<LoadReport>;
  /** Resolves once the balancer stopped sending on its own (readiness) and the last request is answered. */
  readonly drained: Promise<LoadReport>;
}

/** Options of `startLoad`. */
export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  /** Connections, each with one request at a time. */
  readonly concurrency: number;
  /** Behave like a load balancer: poll /readyz (every `pollMs`) and stop sending once it is not 200. */
  readonly followReadiness?: boolean;
  readonly pollMs?: number;
}

class NotRouted extends Error {
  override name = "NotRouted";
}

/** Starts sending; see `LoadOptions`. */
export function startLoad(options: LoadOptions): Load {
  const answers: Answer[] = [];
  const errors: Record<string, number> = {};
  let routable = true;
  let stopped = false;
  let unroutableAt: number | null = null;
  const target = new URL(options.url);
  // A balancer that has taken the instance out opens no new connection to it. No socket limit: each user has
  // one request at a time, so the agent never queues one (a queued request whose connection is refused
  // would stay at the head of the agent's queue and block the others).
  const agent = new Agent({ keepAlive: true });
  (agent as unknown as { createConnection: (o: NetConnectOpts, cb: (e: Error | null, s?: Socket) => void) => Socket | undefined }).createConnection = (o, cb) => {
    if (!routable || stopped) {
      cb(new NotRouted("not routed"));
      return undefined;
    }
    return createConnection(o);
  };

  const one = (): Promise<void> =>
    new Promise((resolve) => {
      let req: ClientRequest | undefined = undefined;
      req = request({ host: target.hostname, port: target.port, path: options.path, agent, headers: options.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          let code: string | undefined;
          if (res.statusCode !== 200) {
            try {
              code = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { code?: string }).code;
            } catch {
              code = "(not json)";
            }
          }
          const connection = res.headers.connection;
          const requestId = res.headers["x-request-id"];
          const retryAfter = res.headers["retry-after"];
          answers.push({ at: Date.now(), status: res.statusCode ?? 0, code, connection, requestId: typeof requestId === "string" ? requestId : undefined, retryAfter });
          resolve();
        });
        res.on("error", (e: NodeJS.ErrnoException) => {
          errors[e.code ?? e.message] = (errors[e.code ?? e.message] ?? 0) + 1;
          resolve();
        });
      });
      req.on("error", (e: NodeJS.ErrnoException) => {
        if (!(e instanceof NotRouted)) errors[e.code ?? e.message] = (errors[e.code ?? e.message] ?? 0) + 1;
        resolve();
      });
      req.end();
    });

  const user = async (): Promise<void> => {
    while (!stopped && routable) await one();
  };
  const users = Array.from({ length: options.concurrency }, () => user());

  let poller: ReturnType<typeof setInterval> | undefined;
  if (options.followReadiness) {
    poller = setInterval(() => {
      // A health check on a connection of its own, as balancers do.
      const check = request({ host: target.hostname, port: target.port, path: "/readyz", agent: false }, (res) => {
        res.resume();
        if (res.statusCode !== 200) out();
      });
      check.on("error", () => out());
      check.end();
    }, options.pollMs ?? 50);
  }
  function out(): void {
    if (!routable) return;
    routable = false;
    unroutableAt = Date.now();
    clearInterval(poller);
  }

  const report = async (): Promise<LoadReport> => {
    await Promise.all(users);
    clearInterval(poller);
    agent.destroy();
    return { answers, errors, unroutableAt, count: (status) => answers.filter((a) => a.status === status).length };
  };
  const drained = report();
  return {
    get routable() {
      return routable;
    },
    drained,
    stop: () => {
      stopped = true;
      return drained;
    },
  };
}
