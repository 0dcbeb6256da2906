/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, `undefined` members left out. The same value
 * always gives the same bytes, whatever order a store or a driver hands its keys back in, so a hash over it can
 * be recomputed from what is stored.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json | undefined };

/** `value` as canonical JSON text (throws on a number that JSON cannot carry, such as NaN). */
export function canonicalJson(value: Json | undefined): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot carry ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v as Json)).join(",")}]`;
  const obj = value as { readonly [key: string]: Json | undefined };
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(",")}}`;
}
