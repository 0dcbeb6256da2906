/**
 * How a console request presents its session: `Authorization: Bearer bds_sess_…` (scripts), or the browser
 * console's cookie. The cookie is `__Host-` prefixed, HttpOnly, Secure and SameSite=Strict; a state-changing
 * request that relies on it must also carry the console's own header, which a cross-site page cannot send
 * without a CORS preflight the console never grants (so a forged form or fetch is refused, even from a browser
 * that ignores SameSite).
 */
import { ServiceError } from "../../errors/service-error.ts";
import { bearerToken } from "../request-url.ts";

/** The browser console's session cookie. */
export const SESSION_COOKIE = "__Host-bds_console";

/** The header the browser console sends with every request that changes state (any value). */
export const CONSOLE_CSRF_HEADER = "x-benchdata-console";

/** A session token as presented, and how. */
export interface PresentedSession {
  readonly token: string;
  readonly via: "bearer" | "cookie";
}

const CSRF_REFUSED = new ServiceError(
  403,
  "console.csrf_refused",
  `A state-changing console request authenticated by the session cookie must carry the \`${CONSOLE_CSRF_HEADER}\` header and come from the console's own origin.`,
);

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | null, name: string): string | null {
  if (header === null) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The session token a request presents (a bearer token wins over the cookie), or null. */
export function presentedSession(request: Request): PresentedSession | null {
  const bearer = bearerToken(request.headers.get("authorization"));
  if (bearer !== null) return { token: bearer, via: "bearer" };
  const cookie = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  return cookie === null || cookie === "" ? null : { token: cookie, via: "cookie" };
}

/** Refuses (403 `console.csrf_refused`) a state-changing request that lacks the console header or comes from another site. */
export function checkCsrf(request: Request): void {
  const method = request.method;
  if (method === "GET" || method === "HEAD") return;
  if (request.headers.get(CONSOLE_CSRF_HEADER) === null) throw CSRF_REFUSED;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") throw CSRF_REFUSED;
}

/** The Set-Cookie value that stores a session token in the browser for `maxAgeSeconds`. */
export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; Secure; SameSite=Strict`;
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;
}
