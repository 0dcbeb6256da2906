/**
 * Failed operator authentication, throttled per client address: the admin API's token and the `/metrics` token
 * count together, in one throttle per app, so guessing at one surface does not buy more guesses at the other. Once
 * an address has presented a missing or wrong token `limit` times within `windowMs`, its further requests with a
 * wrong token are answered 429 `auth.too_many_failures` (with `Retry-After`) until that window ends. A correct token
 * is never refused: the token is compared (in constant time) before the throttle is consulted, so an attacker
 * sharing the operator's address cannot lock the operator out.
 *
 * Per instance and in memory: the map of addresses is bounded (`capacity`, the least recently failing dropped first),
 * so a flood from many addresses costs a fixed amount of memory. IPv6 addresses are counted per /64 (one host
 * usually owns a whole /64); IPv4 per address; an unknown address is one bucket of its own.
 */
import type { Clock } from "../../clock/clock.ts";
import { ServiceError } from "../../errors/service-error.ts";
import type { Logger } from "../../log/logger.ts";
import { parseIp } from "../../net/cidr.ts";

/** Failures from one address within `windowMs` after which wrong tokens are refused with 429. */
export const ADMIN_AUTH_FAILURE_LIMIT = 10;
/** The throttle's window (ms). */
export const ADMIN_AUTH_WINDOW_MS = 60_000;
/** Addresses remembered at most. */
export const ADMIN_AUTH_CAPACITY = 10_000;
/** The shortest time between two log lines about throttled addresses (ms). */
const LOG_INTERVAL_MS = 10_000;

/** Options of `adminAuthThrottle`. */
export interface AdminAuthThrottleOptions {
  readonly limit?: number;
  readonly windowMs?: number;
  readonly capacity?: number;
}

/** Where a token is presented: the admin API or `/metrics`. */
export type ThrottledSurface = "admin" | "metrics";

/** Counts failed operator authentications (admin API and `/metrics`) per address. */
export interface AdminAuthThrottle {
  /** Seconds until `address` may try a wrong token again, or 0 when it is not throttled. */
  retryAfter(address: string): number;
  /** Records a failed authentication from `address` at `surface` (logged); logs (rate-limited) when it becomes throttled. */
  failed(address: string, surface?: ThrottledSurface): void;
  /** Addresses currently remembered (for tests). */
  readonly size: number;
}

interface Entry {
  start: number;
  count: number;
}

/** The bucket an address counts in: IPv4 per address, IPv6 per /64, unparsable or unknown as one bucket. */
export function throttleKey(address: string): string {
  const ip = parseIp(address);
  if (ip === null) return "?";
  let v4 = ip[10] === 0xff && ip[11] === 0xff;
  for (let i = 0; v4 && i < 10; i++) if (ip[i] !== 0) v4 = false;
  if (v4) return `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
  let key = "";
  for (let i = 0; i < 8; i += 2) key += ((ip[i]! << 8) | ip[i + 1]!).toString(16) + ":";
  return key + ":/64";
}

/** A throttle timed by `clock`, logging to `logger`. */
export function adminAuthThrottle(clock: Clock, logger: Logger, options: AdminAuthThrottleOptions = {}): AdminAuthThrottle {
  const limit = options.limit ?? ADMIN_AUTH_FAILURE_LIMIT;
  const windowMs = options.windowMs ?? ADMIN_AUTH_WINDOW_MS;
  const capacity = options.capacity ?? ADMIN_AUTH_CAPACITY;
  // Insertion order is recency order: an entry is re-inserted on each failure, so the first one is the stalest.
  const entries = new Map<string, Entry>();
  let lastLine = -Infinity;
  let unlogged = 0; // addresses throttled since the last line

  const live = (key: string, now: number): Entry | undefined => {
    const e = entries.get(key);
    if (e !== undefined && now - e.start >= windowMs) {
      entries.delete(key);
      return undefined;
    }
    return e;
  };

  return {
    retryAfter(address) {
      const now = clock.now();
      const e = live(throttleKey(address), now);
      if (e === undefined || e.count < limit) return 0;
      return Math.max(1, Math.ceil((e.start + windowMs - now) / 1000));
    },
    failed(address, surface = "admin") {
      const now = clock.now();
      const key = throttleKey(address);
      let e = live(key, now);
      if (e === undefined) e = { start: now, count: 0 };
      else entries.delete(key);
      e.count++;
      if (entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(key, e);
      if (e.count !== limit) return;
      unlogged++;
      if (now - lastLine < LOG_INTERVAL_MS) return;
      // Never the token: only the address, how many failed, and for how long wrong tokens are refused.
      logger.warn("admin authentication throttled: too many failed attempts", {
        client_address: key,
        surface,
        failures: limit,
        window_s: windowMs / 1000,
        retry_after_s: Math.ceil((e.start + windowMs - now) / 1000),
        addresses_throttled: unlogged,
      });
      lastLine = now;
      unlogged = 0;
    },
    get size() {
      return entries.size;
    },
  };
}

/** 429 `auth.too_many_failures`: wrong tokens from this address are refused for `seconds`. */
export function tooManyFailures(seconds: number): ServiceError {
  return new ServiceError(
    429,
    "auth.too_many_failures",
    `Too many failed authentications (admin or metrics token) from this address: wrong tokens are refused for ${seconds} s (a correct token is still admitted).`,
    { "retry-after": String(seconds) },
  );
}

/**
 * The refusal of a missing or wrong token from `address`: 429 once the address is throttled (not counted again),
 * else `invalid` (the surface's own 401), counted. Call it only after the token was compared and found wrong.
 */
export function refuseWrongToken(throttle: AdminAuthThrottle, address: string, surface: ThrottledSurface, invalid: ServiceError): ServiceError {
  const wait = throttle.retryAfter(address);
  if (wait > 0) return tooManyFailures(wait);
  throttle.failed(address, surface);
  return invalid;
}
