/** SHA-256 of presented secrets, memoized for the hot path. */
import { hashSecret } from "../keys/api-key.ts";

/**
 * `hashSecret` with a bounded memo of recent inputs: a client sends the same key on every request, and the
 * JavaScript SHA-256 is the single largest cost of the pipeline. The memo lives in process memory next to
 * the in-flight requests that carry the same raw keys; it is cleared whole when full.
 */
export function memoHash(limit: number = 4096): (raw: string) => string {
  const memo = new Map<string, string>();
  return (raw) => {
    let h = memo.get(raw);
    if (h === undefined) {
      if (memo.size >= limit) memo.clear();
      h = hashSecret(raw);
      memo.set(raw, h);
    }
    return h;
  };
}
