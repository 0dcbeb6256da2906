/** Webhook URL safety: https only, no credentials, and no host that is or resolves to a non-public address. */
import type { AddressClass } from "../net/ip-address.ts";
import { classifyAddress, parseIpAddress } from "../net/ip-address.ts";

/** Resolves a hostname to its IP addresses (a capability: core cannot do DNS). Throws or returns [] when it does not resolve. */
export type ResolveHost = (host: string) => Promise<string[]>;

/** The operator's development switches (`webhooks.allowHttp`, `webhooks.allowPrivateNetworks`). */
export interface WebhookUrlOptions {
  readonly allowHttp: boolean;
  readonly allowPrivateNetworks: boolean;
}

/** Why a URL was refused, as a stable class: the delivery worker records `blocked` or `dns` from it. */
export type WebhookUrlProblem = "invalid" | "scheme" | "credentials" | "unresolvable" | "blocked";

/** The outcome of checking a webhook URL: the parsed URL and the addresses to connect to, or why not. */
export type WebhookUrlCheck =
  | { readonly ok: true; readonly url: URL; readonly addresses: string[] }
  | { readonly ok: false; readonly reason: string; readonly problem: WebhookUrlProblem };

/** Never reachable, even with `allowPrivateNetworks`: the cloud metadata endpoints hand out credentials. */
const ALWAYS_REFUSED: ReadonlySet<AddressClass> = new Set(["metadata", "invalid"]);

/** The longest webhook URL accepted. */
export const MAX_URL_LENGTH = 2048;

function refuse(problem: WebhookUrlProblem, reason: string): WebhookUrlCheck {
  return { ok: false, problem, reason };
}

/**
 * Checks a webhook URL: `https:` (or `http:` with `allowHttp`), no user or password, and a host that is a
 * public address or resolves only to public addresses (`allowPrivateNetworks` lifts that, except for cloud
 * metadata addresses). Resolution failures are refusals too. Run at creation and again before every attempt.
 */
export async function checkWebhookUrl(url: string | URL, options: WebhookUrlOptions, resolve: ResolveHost): Promise<WebhookUrlCheck> {
  let u: URL;
  if (String(url).length > MAX_URL_LENGTH) return refuse("invalid", `the webhook URL is longer than ${MAX_URL_LENGTH} characters`);
  try {
    u = new URL(url);
  } catch {
    return refuse("invalid", "the webhook URL is not a valid absolute URL");
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && options.allowHttp)) {
    return refuse("scheme", options.allowHttp ? "the webhook URL must use https or http" : "the webhook URL must use https");
  }
  if (u.username !== "" || u.password !== "") return refuse("credentials", "the webhook URL must not contain credentials");
  const host = u.hostname;
  if (host === "") return refuse("invalid", "the webhook URL has no host");

  let addresses: string[];
  const literal = parseIpAddress(host);
  if (literal) {
    addresses = [host.startsWith("[") ? host.slice(1, -1) : host];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return refuse("unresolvable", `the webhook host ${host} does not resolve`);
  }
  for (const address of addresses) {
    const cls = classifyAddress(address);
    if (cls === "public") continue;
    if (options.allowPrivateNetworks && !ALWAYS_REFUSED.has(cls)) continue;
    // The resolved address itself stays out of the message: it would reveal internal DNS to the caller.
    const what = literal ? `the webhook host ${host} is` : `the webhook host ${host} resolves to`;
    return refuse("blocked", `${what} a ${cls.replace("_", "-")} address, which is not allowed`);
  }
  return { ok: true, url: u, addresses };
}
