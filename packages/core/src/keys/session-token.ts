/** Console session tokens `bds_sess_<48 URL-safe chars>` and one-time sign-in tokens `bds_link_<48>`: stored only hashed. */
import type { RandomSource } from "../clock/clock.ts";
import { hashSecret, randomToken } from "./api-key.ts";

const SESSION_PATTERN = /^bds_sess_[A-Za-z0-9_-]{48}$/;
const SIGN_IN_PATTERN = /^bds_link_[A-Za-z0-9_-]{48}$/;

/** The longest a console session may last, whatever the configuration says: 90 days. */
export const MAX_SESSION_DAYS = 90;

/** A freshly generated token and its storage hash. */
export interface GeneratedSessionToken {
  readonly raw: string;
  readonly hash: string;
}

/** Generates a session token. */
export function generateSessionToken(random: RandomSource): GeneratedSessionToken {
  const raw = `bds_sess_${randomToken(random)}`;
  return { raw, hash: hashSecret(raw) };
}

/** Generates a one-time sign-in token (the secret part of a sign-in link). */
export function generateSignInToken(random: RandomSource): GeneratedSessionToken {
  const raw = `bds_link_${randomToken(random)}`;
  return { raw, hash: hashSecret(raw) };
}

/** Whether `raw` has the exact session-token format. */
export function isSessionToken(raw: string): boolean {
  return SESSION_PATTERN.test(raw);
}

/** Whether `raw` has the exact sign-in-token format. */
export function isSignInToken(raw: string): boolean {
  return SIGN_IN_PATTERN.test(raw);
}

/** A session's lifetime in ms for `ttlDays`, clamped to 1 day … MAX_SESSION_DAYS (0 or less means the maximum, never forever). */
export function sessionLifetimeMs(ttlDays: number): number {
  const days = !(ttlDays > 0) ? MAX_SESSION_DAYS : Math.min(Math.max(ttlDays, 1), MAX_SESSION_DAYS);
  return Math.round(days * 86_400_000);
}
