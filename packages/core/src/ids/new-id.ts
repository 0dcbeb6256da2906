/** Identifiers `<prefix>_<ULID>`, time-ordered by the injected clock. */
import { ulid } from "ulid";
import type { Clock, RandomSource } from "../clock/clock.ts";

/** The contract's identifier prefixes. */
export type IdPrefix = "acc" | "key" | "wh" | "evt" | "inv" | "dlv" | "vcfs" | "sess" | "aud";

const buf = new Uint8Array(1);

/** A new `<prefix>_<ULID>` whose time part is `clock.now()` and whose random part comes from `random`. */
export function newId(prefix: IdPrefix, clock: Clock, random: RandomSource): string {
  return `${prefix}_${ulid(clock.now(), () => random.fill(buf)[0]! / 256)}`;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `id` is `<prefix>_<ULID>` for the given prefix. */
export function isId(prefix: IdPrefix, id: string): boolean {
  return id.startsWith(prefix + "_") && ULID.test(id.slice(prefix.length + 1));
}
