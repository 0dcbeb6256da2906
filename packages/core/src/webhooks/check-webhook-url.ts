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

function refuse(problem: WebhookUrlProblem, reason: string): { readonly ok: false; readonly reason: string; readonly problem: WebhookUrlProblem } {
  return { ok: false, problem, reason };
}

/** The syntactic part of the check (no DNS): the parsed URL, or why it is refused. */
export function checkWebhookUrlShape(
  url: string | URL,
  allowHttp: boolean,
): { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly reason: string; readonly problem: WebhookUrlProblem } {
  const text = String(url);
  if (text.length > MAX_URL_LENGTH) return refuse("invalid", `the webhook URL is longer than ${MAX_URL_LENGTH} characters`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return refuse("invalid", "the webhook URL is not a valid absolute URL");
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && allowHttp)) {
    return refuse("scheme", allowHttp ? "the webhook URL must use https or http" : "the webhook URL must use https");
  }
  if (u.username !== "" || u.password !== "") return refuse("credentials", "the webhook URL must not contain credentials");
  // A fragment is never sent to the receiver, and one holding `@host` makes the URL read as another host to a
  // person (`https://8.8.8.8#@127.0.0.1/`). `new URL` keeps an empty `#` only in href, so look at the text too.
  if (u.hash !== "" || u.href.includes("#")) return refuse("invalid", "the webhook URL must not contain a fragment (#)");
  if (u.hostname === "") return refuse("invalid", "the webhook URL has no host");
  return { ok: true, url: u };
}

/** The `detail` of a 422 `validation.invalid_url`: the reason as a sentence, one style for every refusal. */
export function webhookUrlDetail(reason: string): string {
  return `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`;
}

/** "a private", "an unspecified": the article that fits the class name as it is written in the message. */
function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;
}

/**
 * Checks a webhook URL: `https:` (or `http:` with `allowHttp`), no user or password, no fragment, and a host that is a
 * public address or resolves only to public addresses (`allowPrivateNetworks` lifts that, except for cloud
 * metadata addresses). Resolution failures are refusals too. Run at creation and again before every attempt.
 */
export async function checkWebhookUrl(url: string | URL, options: WebhookUrlOptions, resolve: ResolveHost): Promise<WebhookUrlCheck> {
  const shape = checkWebhookUrlShape(url, options.allowHttp);
  if (!shape.ok) return shape;
  const u = shape.url;
  const host = u.hostname;

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
    return refuse("blocked", `${what} ${withArticle(cls.replace("_", "-"))} address, which is not allowed`);
  }
  return { ok: true, url: u, addresses };
}
