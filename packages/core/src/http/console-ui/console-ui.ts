/**
 * The browser console's files at `/console/`, as handed to `createApp({ consoleUi })` (the CLI hands in
 * `@benchdata/console`'s build), served with a strict Content-Security-Policy: scripts, styles and requests
 * only from this origin, no inline script or style, no framing, no referrer. Core carries no console of its
 * own, so an embedder that hands none serves none.
 */
import { NOSNIFF } from "../reply.ts";

/** One file of the browser console: its content type, ETag (a quoted content hash) and body. */
export interface ConsoleAsset {
  readonly type: string;
  readonly etag: string;
  readonly body: string;
}

/** The browser console's files by path (`/console/`, `/console/console.js`, …), e.g. `@benchdata/console`'s `CONSOLE_ASSETS`. */
export type ConsoleAssets = Readonly<Record<string, ConsoleAsset>>;

/** The console page's Content-Security-Policy. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": NOSNIFF,
  "cross-origin-opener-policy": "same-origin",
} as const;

/** Whether `path` (trailing slash dropped) is the console's: `/console` or below it. */
export function isConsolePath(path: string): boolean {
  return path === "/console" || path.startsWith("/console/");
}

/** The answer for a console path: a file, `/console` → `/console/`, or 404/405. */
export function consoleUiResponse(assets: ConsoleAssets, request: Request, path: string): Response {
  const method = request.method;
  if (method !== "GET" && method !== "HEAD") {
    return new Response(JSON.stringify({ detail: `${method} is not allowed on ${path}; allowed: GET, HEAD.`, code: "method_not_allowed", status: 405 }), {
      status: 405,
      headers: { "content-type": "application/json", allow: "GET, HEAD", "x-content-type-options": NOSNIFF },
    });
  }
  // The page itself lives at /console/ (the sign-in link's path); the router drops a trailing slash.
  const url = request.url;
  const hashless = url.split("#")[0]!.split("?")[0]!;
  if (path === "/console" && !hashless.endsWith("/")) return new Response(null, { status: 308, headers: { location: "/console/", "x-content-type-options": NOSNIFF } });
  const key = path === "/console" ? "/console/" : path;
  const asset = Object.hasOwn(assets, key) ? assets[key] : undefined;
  if (asset === undefined) {
    return new Response(JSON.stringify({ detail: `No route ${method} ${path}.`, code: "not_found", status: 404 }), {
      status: 404,
      headers: { "content-type": "application/json", "x-content-type-options": NOSNIFF },
    });
  }
  const headers = { ...SECURITY_HEADERS, "content-type": asset.type, etag: asset.etag, "cache-control": "no-cache" };
  if (request.headers.get("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
  return new Response(method === "HEAD" ? null : asset.body, { status: 200, headers });
}
