/**
 * The data pipeline's memory of key lookups, so most requests skip the lookup's round trip to storage.
 *
 * Entries are never trusted alone: every admission carries `expect` (the hash and the account's version), and
 * the store admits only if they still hold, inside the same atomic operation. A rotation, revocation or account
 * change made by any process therefore takes effect on the very next request here too (the store answers
 * `stale`, the pipeline looks the key up again). Entries also expire after `maxAgeMs`, so a store that does not
 * honour `expect` (a contract violation the conformance suite catches) cannot keep a revoked key alive here
 * for longer than that. Keys are SHA-256 hashes, never raw keys.
 */
import type { KeyLookup } from "../../storage/types.ts";

/** A bounded map from key hash to lookup; the oldest entry goes first when it is full. */
export interface LookupCache {
  /** The lookup remembered for `hash`, unless it is older than the cache's maximum age at `now`. */
  get(hash: string, now: number): KeyLookup | undefined;
  set(hash: string, lookup: KeyLookup, now: number): void;
  delete(hash: string): void;
}

/** A LookupCache holding at most `capacity` lookups (0 disables it), each for at most `maxAgeMs`. */
export function lookupCache(capacity: number, maxAgeMs: number): LookupCache {
  const entries = new Map<string, { readonly lookup: KeyLookup; readonly at: number }>();
  return {
    get(hash, now) {
      const entry = entries.get(hash);
      if (entry === undefined) return undefined;
      if (now - entry.at < maxAgeMs && now >= entry.at) return entry.lookup;
      entries.delete(hash);
      return undefined;
    },
    set(hash, lookup, now) {
      if (capacity <= 0) return;
      entries.delete(hash);
      if (entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(hash, { lookup, at: now });
    },
    delete(hash) {
      entries.delete(hash);
    },
  };
}
