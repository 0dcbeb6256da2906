/** Cheap reads of a request's URL and headers, without building a URL object per request. */

/** The path and the query string (without `?`) of a request URL; one trailing slash is dropped. */
export function splitUrl(url: string): { path: string; search: string } {
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  if (start < 0) return { path: "/", search: "" };
  let end = url.length;
  const hash = url.indexOf("#", start);
  if (hash >= 0) end = hash;
  const q = url.indexOf("?", start);
  let search = "";
  let pathEnd = end;
  if (q >= 0 && q < end) {
    pathEnd = q;
    search = url.slice(q + 1, end);
  }
  if (pathEnd - start > 1 && url.charCodeAt(pathEnd - 1) === 47 /* / */) pathEnd--;
  return { path: url.slice(start, pathEnd), search };
}

/** The host name of a request URL (no port, lowercase). */
export function urlHostname(url: string): string {
  const scheme = url.indexOf("://");
  const from = scheme < 0 ? 0 : scheme + 3;
  let end = from;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return stripPort(url.slice(from, end)).toLowerCase();
}

/** A Host value without its port (`[::1]:80` → `[::1]`). */
export function stripPort(host: string): string {
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    return close < 0 ? host : host.slice(0, close + 1);
  }
  const colon = host.indexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or null. */
export function bearerToken(header: string | null): string | null {
  if (header === null || header.length < 8) return null;
  const c = header.charCodeAt(0) | 0x20;
  if (c !== 98 /* b */ || header.slice(0, 7).toLowerCase() !== "bearer ") return null;
  const token = header.slice(7).trim();
  return token.length > 0 ? token : null;
}
