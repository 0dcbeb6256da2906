/** Console session tokens `bds_sess_<48 URL-safe chars>`: issued by the operator, stored only hashed. */
import type { RandomSource } from "../clock/clock.ts";
import { hashSecret, randomToken } from "./api-key.ts";

const SESSION_PATTERN = /^bds_sess_[A-Za-z0-9_-]{48}$/;

/** A freshly generated session token and its storage hash. */
export interface GeneratedSessionToken {
  readonly raw: string;
  readonly hash: string;
}

/** Generates a session token. */
export function generateSessionToken(random: RandomSource): GeneratedSessionToken {
  const raw = `bds_sess_${randomToken(random)}`;
  return { raw, hash: hashSecret(raw) };
}

/** Whether `raw` has the exact session-token format. */
export function isSessionToken(raw: string): boolean {
  return SESSION_PATTERN.test(raw);
}
