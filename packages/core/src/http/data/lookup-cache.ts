/**
 * The data pipeline's memory of key lookups, so most requests skip the lookup's round trip to storage.
 *
 * Entries are never trusted alone: every admission carries `expect` (the hash and the account's version), and
 * the store admits only if they still hold, inside the same atomic operation. A rotation, revocation or account
 * change made by any process therefore takes effect on the very next request here too (the store answers
 * `stale`, the pipeline looks the key up again). Keys are SHA-256 hashes, never raw keys.
 */
import type { KeyLookup } from "../../storage/types.ts";

/** A bounded map from key hash to lookup; the oldest entry goes first when it is full. */
export interface LookupCache {
  get(hash: string): KeyLookup | undefined;
  set(hash: string, lookup: KeyLookup): void;
  delete(hash: string): void;
}

/** A LookupCache holding at most `capacity` lookups (0 disables it). */
export function lookupCache(capacity: number): LookupCache {
  const entries = new Map<string, KeyLookup>();
  return {
    get: (hash) => entries.get(hash),
    set(hash, lookup) {
      if (capacity <= 0) return;
      entries.delete(hash);
      if (entries.size >= capacity) entries.delete(entries.keys().next().value as string);
      entries.set(hash, lookup);
    },
    delete(hash) {
      entries.delete(hash);
    },
  };
}
