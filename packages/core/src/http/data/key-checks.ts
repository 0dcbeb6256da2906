/** The per-request checks after a key is found: client address against the allow-list, and the request's target environment. */
import type { ServiceConfig } from "../../config/config.ts";
import type { Environment } from "../../keys/api-key.ts";
import type { Cidr } from "../../net/cidr.ts";
import { ipInRanges, parseCidr } from "../../net/cidr.ts";
import type { ClientInfo } from "../app-options.ts";
import { stripPort, urlHostname } from "../request-url.ts";

/**
 * The client's address: the adapter's, or with `trustProxy` the leftmost `X-Forwarded-For` entry (the
 * original client as the operator's proxy recorded it). Empty when unknown.
 */
export function clientAddressOf(request: Request, client: ClientInfo, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = request.headers.get("x-forwarded-for");
    if (xff !== null) {
      const comma = xff.indexOf(",");
      const first = (comma < 0 ? xff : xff.slice(0, comma)).trim();
      if (first !== "") return withoutPort(first);
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
