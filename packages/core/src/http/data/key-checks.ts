/** The per-request checks after a key is found: client address against the allow-list, and the request's target environment. */
import type { ServiceConfig } from "../../config/config.ts";
import type { Environment } from "../../keys/api-key.ts";
import type { Cidr } from "../../net/cidr.ts";
import { ipInRanges, parseCidr } from "../../net/cidr.ts";
import type { ClientInfo } from "../app-options.ts";
import { stripPort, urlHostname } from "../request-url.ts";

/**
 * The client's address: the adapter's, or with `trustProxy` the rightmost `X-Forwarded-For` entry, the one the
 * operator's proxy appended (the entries left of it are whatever the client sent, so they never count). Empty
 * when unknown.
 */
export function clientAddressOf(request: Request, client: ClientInfo, trustProxy: boolean): string {
  if (trustProxy) {
    // Several X-Forwarded-For lines arrive joined by ", ", so the last entry is still the proxy's.
    const xff = request.headers.get("x-forwarded-for");
    if (xff !== null) {
      const last = xff.slice(xff.lastIndexOf(",") + 1).trim();
      if (last !== "") return withoutPort(last);
    }
  }
  return client.clientAddress ?? "";
}

// `[v6]:port` and `v4:port` lose the port; a bare IPv6 address (several colons) is kept whole.
function withoutPort(address: string): string {
  if (address.startsWith("[")) return stripPort(address);
  const colon = address.indexOf(":");
  return colon >= 0 && colon === address.lastIndexOf(":") ? address.slice(0, colon) : address;
}

const parsedRanges = new WeakMap<readonly string[], Cidr[]>();

/** Whether `address` is inside the account's allow-list (unparsable entries never match: fail closed). */
export function addressAllowed(address: string, allowedCidrs: readonly string[]): boolean {
  let ranges = parsedRanges.get(allowedCidrs);
  if (ranges === undefined) {
    ranges = [];
    for (const text of allowedCidrs) {
      const c = parseCidr(text);
      if (c !== null) ranges.push(c);
    }
    parsedRanges.set(allowedCidrs, ranges);
  }
  return address !== "" && ipInRanges(address, ranges);
}

/**
 * The environment a request targets: the operator's fixed `target`, or in `host` mode `test` when the Host's
 * first label is `sandbox` or `test`, else `live`.
 */
export function requestTarget(config: ServiceConfig, request: Request): Environment {
  if (config.target !== "host") return config.target;
  const hostHeader = request.headers.get("host");
  const host = hostHeader !== null ? stripPort(hostHeader).toLowerCase() : urlHostname(request.url);
  const dot = host.indexOf(".");
  const label = dot < 0 ? host : host.slice(0, dot);
  return label === "sandbox" || label === "test" ? "test" : "live";
}
