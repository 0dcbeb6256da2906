/**
 * The key checks a PostgreSQL storage's admissions passed, remembered so that later batches can skip them.
 *
 * Every admission with `expect` is checked by benchdata_admit_arrays: its hash must still name an active,
 * unretired key, this one, of this account. The database keeps an epoch (admission_epoch in
 * migrations/0007-admission-epoch.ts) that moves, in the writer's transaction, with every change of the key and hash tables, and
 * never takes a value twice; the statement that checks the keys reads it, and answers it. A check passed at
 * epoch E therefore holds in every state of the database whose epoch is E. The server sends the epoch it last
 * heard with each batch and flags the admissions whose hash it verified at that epoch; if the batch finds the
 * epoch unchanged, those skip the check, otherwise every admission is checked afresh. The account's version is
 * not remembered: every batch reads it. Hearing any other epoch than the last one forgets everything, so an
 * epoch the database reaches again (a restored backup, a failover) is trusted only for checks made after it.
 */
import { BoundedMap } from "../bounded-map.ts";

/** A hash found to name this active, unretired key of this account, in the state of the database at `epoch`. */
interface Verified {
  readonly keyId: string;
  readonly accountId: string;
  readonly epoch: number;
}

/** What a storage remembers of its passed key checks (see the module comment). */
export interface VerifiedKeys {
  /** The last epoch heard, which the next batch sends (null before the first). */
  readonly epoch: number | null;
  /** Whether `hash` was found to name key `keyId` of account `accountId` at the last epoch heard. */
  holds(hash: string, keyId: string, accountId: string): boolean;
  /** Hears the epoch a batch read (null: none, and nothing is recorded from that batch). */
  heard(epoch: number | null): void;
  /** Records that `hash` named key `keyId` of account `accountId` at `epoch`. */
  verified(hash: string, keyId: string, accountId: string, epoch: number): void;
  /** Forgets what `hash` was found to name. */
  forget(hash: string): void;
}

/** A VerifiedKeys remembering at most `capacity` hashes. */
export function verifiedKeys(capacity: number): VerifiedKeys {
  let epoch: number | null = null;
  const byHash = new BoundedMap<Verified>(capacity);
  return {
    get epoch() {
      return epoch;
    },
    holds(hash, keyId, accountId) {
      const v = byHash.get(hash);
      return v !== undefined && v.epoch === epoch && v.keyId === keyId && v.accountId === accountId;
    },
    heard(e) {
      if (e === null) return;
      // Checks made at another epoch never hold again at this one; forgetting them at every move (not only a
      // move back) also means an epoch the database reaches a second time (a restore, a failover) finds nothing.
      if (epoch !== null && e !== epoch) byHash.clear();
      epoch = e;
    },
    verified(hash, keyId, accountId, e) {
      byHash.set(hash, { keyId, accountId, epoch: e });
    },
    forget(hash) {
      byHash.delete(hash);
    },
  };
}
