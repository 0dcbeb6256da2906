/**
 * `X-Request-Id`: every answer carries one. A sane incoming id (1–128 characters of `A–Z a–z 0–9 . _ : -`, as a
 * proxy or client would send) is echoed; anything else is ignored and a ULID is generated. The id goes into the
 * log lines written while the request is handled and into the access log; error bodies keep the contract's
 * `{detail, code, status}` shape, so the header is the correlation id.
 */
import type { Clock, RandomSource } from "../clock/clock.ts";
import type { ClientInfo } from "./app-options.ts";

/** The response header (lower-cased, as stored in Headers). */
export const REQUEST_ID_HEADER = "x-request-id";

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request ids of requests in flight, for the log lines written while they are handled. */
const ids = new WeakMap<Request, string>();

/** Crockford's base 32, as character codes: a ULID's alphabet. */
const CROCKFORD = Array.from("0123456789ABCDEFGHJKMNPQRSTVWXYZ", (c) => c.charCodeAt(0));
const codes = new Array<number>(26).fill(0);
const randomBytes = new Uint8Array(16);
let codedMs = -1;

/**
 * A ULID (the time in its first 10 characters, 80 random bits after), built as one flat string from character
 * codes. The ulid package's `ulid()` asks its PRNG once per character and joins the characters one by one; the
 * resulting string then had to be flattened and checked by every header writer downstream, which made the id
 * about a quarter of an in-process data request's instructions (bench/app-instructions.ts).
 */
function newRequestId(now: number, random: RandomSource): string {
  if (now !== codedMs) {
    codedMs = now;
    let t = Math.floor(now); // a clock with fractions of a millisecond must not make characters outside the alphabet
    for (let i = 9; i >= 0; i--) {
      codes[i] = CROCKFORD[t % 32]!;
      t = Math.floor(t / 32);
    }
  }
  random.fill(randomBytes);
  // Each byte's low five bits: 256 is a multiple of 32, so every character is equally likely.
  for (let i = 0; i < 16; i++) codes[10 + i] = CROCKFORD[randomBytes[i]! & 31]!;
  return String.fromCharCode.apply(null, codes);
}

/** The incoming id when it is sane, else null. */
export function saneRequestId(value: string | null): string | null {
  return value !== null && SANE.test(value) ? value : null;
}

/** Decides the request's id (echoed or generated) and remembers it for `requestIdOf`. */
export function assignRequestId(request: Request, clock: Clock, random: RandomSource): string {
  const id = saneRequestId(request.headers.get(REQUEST_ID_HEADER)) ?? newRequestId(clock.now(), random);
  ids.set(request, id);
  return id;
}

/**
 * Responses built with their `X-Request-Id` already in the headers they were constructed with. The data
 * pipeline builds its answers so: touching `response.headers` afterwards would make the Node adapter build
 * the real Response and its body stream (about 20 µs on Node 20, see adapter-node's bridge-response.ts).
 */
const stamped = new WeakSet<Response>();

/** Records that `response` was built with the request's id in its headers; `stampRequestId` leaves it alone. */
export function markStamped(response: Response): Response {
  stamped.add(response);
  return response;
}

/** The id `assignRequestId` gave this request (undefined outside `createApp`'s fetch). */
export function requestIdOf(request: Request | undefined): string | undefined {
  return request === undefined ? undefined : ids.get(request);
}

/**
 * Sets `X-Request-Id` on a response, and adds it to `Access-Control-Expose-Headers` when the response carries
 * CORS headers (so browser code can read it).
 */
export function stampRequestId(response: Response, id: string): Response {
  if (stamped.has(response)) return response;
  const headers = response.headers;
  try {
    headers.set(REQUEST_ID_HEADER, id);
    if (headers.has("access-control-allow-origin")) {
      const expose = headers.get("access-control-expose-headers");
      if (expose === null) headers.set("access-control-expose-headers", "X-Request-Id");
      else if (!/(^|,)\s*x-request-id\s*(,|$)/i.test(expose)) headers.set("access-control-expose-headers", expose + ", X-Request-Id");
    }
    return response;
  } catch {
    // Immutable headers (a Response.redirect or a fetched one): copy it.
    const copy = new Response(response.body, response);
    return stampRequestId(copy, id);
  }
}

/** A listener's handler: a request, and what the adapter knows of its connection, to the answer. */
export type Handler = (request: Request, ctx?: ClientInfo) => Promise<Response>;

/** Told of each answer with its request's id and `performance.now()` at its arrival (the access log). */
export type AnswerObserver = (request: Request, response: Response, id: string, start: number) => void;

/**
 * `handler` with every answer carrying `X-Request-Id` (echoed when sane, else generated), which its log lines
 * carry too; `observe`, when given, sees each answer before it is stamped.
 */
export function withRequestIds(handler: Handler, clock: Clock, random: RandomSource, observe: AnswerObserver | null): Handler {
  if (observe === null)
    return (request, ctx) => {
      const id = assignRequestId(request, clock, random);
      return handler(request, ctx).then((response) => stampRequestId(response, id));
    };
  return (request, ctx) => {
    const id = assignRequestId(request, clock, random);
    const start = performance.now();
    return handler(request, ctx).then((response) => {
      observe(request, response, id, start);
      return stampRequestId(response, id);
    });
  };
}
