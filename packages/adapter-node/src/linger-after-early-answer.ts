/**
 * Lingering close, as nginx does it. An answer can go out before its request's body has arrived: a `413` for a
 * body over the limit, a `401` answered before the body is read. The client is then still sending, and a
 * server that closes the connection at once (node does, for `Connection: close`) resets it under the client's
 * writes: the client's HTTP library reports the reset (`EPIPE`, `ECONNRESET`; node's own client often does)
 * instead of the answer that was sent. So, after such an answer, the server keeps reading and discarding the rest
 * of the body (node's parser drops a body nobody reads) and closes only once the client has sent it all, or
 * once the bound is reached: `ms` in all, `bytes` read. At the bound the connection is cut, kept-alive or not,
 * so a slow sender cannot hold the socket by never finishing a body nobody will read.
 *
 * An early answer to a large body (over 1 MiB, the most the service reads, or of unknown length) also says
 * `Connection: close`: the connection could only serve another request after the rest of the body, and node's
 * own client, told to keep it alive, stops sending that rest and waits (its socket is stuck until the server
 * gives up). Told to close, clients read the answer, stop, and open a new connection for their next request.
 * A smaller body is drained and the connection kept: reading it costs no more than serving it would have.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How long, and how much, the server keeps reading an unwanted body after answering early. */
export interface LingerLimits {
  /** Longest time, in milliseconds, from the answer to the close. */
  readonly ms: number;
  /** Most bytes read from the connection meanwhile. */
  readonly bytes: number;
}

/** 5 s and 64 MiB: enough for a client on a modest uplink to finish a body a few times the 1 MB limit. */
export const DEFAULT_LINGER: LingerLimits = { ms: 5_000, bytes: 64 * 1024 * 1024 };

/** How often a lingering connection's progress is checked against the bound. */
const CHECK_MS = 50;

interface Lingering {
  readonly incoming: IncomingMessage;
  readonly limits: LingerLimits;
  /** node asked to close once the answer is out (`Connection: close`): close when the body ends, not before. */
  close: boolean;
  done: boolean;
}

const lingering = new WeakMap<Socket, Lingering>();
const limitsOf = new WeakMap<ServerResponse, LingerLimits>();

/** A body of at most this many bytes (the service's own limit) is drained on a kept-alive connection after an early answer. */
const SMALL_BODY = 1024 * 1024;

/** What is still to come of the request's body: nothing, a small one, or a large one (or one of unknown length). */
function bodyStillComing(incoming: IncomingMessage): "none" | "small" | "large" {
  if (incoming.complete) return "none";
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") return "large";
    if (name.length === 14 && name.toLowerCase() === "content-length") {
      const n = Number((raw[i + 1] as string).trim());
      return n === 0 ? "none" : n <= SMALL_BODY ? "small" : "large";
    }
  }
  return "none";
}

/**
 * Whether an answer written now goes out before a large body has arrived, so that it should close the
 * connection (`Connection: close`). Reading `complete` is exact once the handler has had a turn of the event
 * loop; for an answer in the same tick as the request, a small body may still be unparsed: it does not count.
 */
export function earlyAnswerCloses(incoming: IncomingMessage): boolean {
  return bodyStillComing(incoming) === "large";
}

/**
 * Arranges for a lingering close if the answer about to be written to `outgoing` goes out before `incoming`'s
 * body has arrived. Costs nothing for a request without a body or whose body was read.
 */
export function lingerAfterEarlyAnswer(incoming: IncomingMessage, outgoing: ServerResponse, limits: LingerLimits = DEFAULT_LINGER): void {
  if (bodyStillComing(incoming) === "none") return;
  limitsOf.set(outgoing, limits);
  // Before node's own "finish" handler, which closes a `Connection: close` socket (through destroySoon).
  outgoing.prependOnceListener("finish", onAnswered);
}

function onAnswered(this: ServerResponse): void {
  const incoming = this.req;
  const socket = incoming.socket;
  const limits = limitsOf.get(this) ?? DEFAULT_LINGER;
  if (incoming.complete || socket.destroyed || lingering.has(socket)) return;
  const state: Lingering = { incoming, limits, close: false, done: false };
  lingering.set(socket, state);
  // node closes a connection that ends with this answer by socket.destroySoon(): end, then destroy once written.
  // Instead: end (the client reads the answer and a FIN), keep reading, destroy once the body is in.
  Object.defineProperty(socket, "destroySoon", { value: lingeringClose, configurable: true, writable: true });
  const startBytes = socket.bytesRead;
  const deadline = Date.now() + limits.ms;
  const stop = (cut: boolean): void => {
    if (state.done) return;
    state.done = true;
    clearInterval(check);
    incoming.off("end", bodyIn);
    socket.off("end", clientDone);
    socket.off("close", gone);
    lingering.delete(socket);
    delete (socket as { destroySoon?: unknown }).destroySoon;
    if (cut || state.close) socket.destroy();
  };
  const bodyIn = (): void => stop(false);
  // The client half-closed: it sends nothing more.
  const clientDone = (): void => stop(true);
  const gone = (): void => stop(false);
  const check = setInterval(() => {
    if (Date.now() >= deadline || socket.bytesRead - startBytes >= limits.bytes) stop(true);
  }, CHECK_MS);
  check.unref();
  incoming.once("end", bodyIn);
  socket.once("end", clientDone);
  socket.once("close", gone);
  // The rest of the body is drained by node (a body nobody read) or by the bridge (one it stopped reading).
}

function lingeringClose(this: Socket): void {
  const state = lingering.get(this);
  if (state === undefined || state.done) {
    delete (this as { destroySoon?: unknown }).destroySoon;
    this.destroySoon();
    return;
  }
  state.close = true;
  if (this.writable) this.end();
}
