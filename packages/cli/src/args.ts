/** Command-line parsing shared by the benchdata commands: flags, env fallbacks, and usage errors. */
import { parseArgs } from "node:util";
import { isCalendarTime } from "@benchdata/core";

/** A mistake in how a command was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The storage URL: --db, then BENCHDATA_DB, then the embedded default; one of another form is a usage error. */
export function dbUrl(flag: string | undefined, fallback = "sqlite:./benchdata.db"): string {
  const url = flag ?? process.env.BENCHDATA_DB ?? fallback;
  const from = flag !== undefined ? "--db" : process.env.BENCHDATA_DB !== undefined ? "BENCHDATA_DB" : "the default database";
  if (url === "memory:" || url === "memory" || url.startsWith("postgres://") || url.startsWith("postgresql://")) return url;
  if (url.startsWith("sqlite:")) {
    if (url.slice("sqlite:".length).replace(/^\/\//, "") === "") throw new UsageError(`${from} "sqlite:" needs a path, e.g. sqlite:./benchdata.db`);
    return url;
  }
  // Never echo what might be a URL with a password in it.
  throw new UsageError(`${from} must be sqlite:PATH, postgres://… or memory:, got "${url.replace(/\/\/[^@/]*@/, "//…@")}"`);
}

/** A flag whose value must be one of `allowed`, or a usage error naming it and them. */
export function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, got "${value}"`);
}

/** An account id flag (`acc_` and a ULID), or a usage error naming it (`--account`, or how else it was given). */
export function accountFlag(value: string, name = "--account"): string {
  if (/^acc_[0-9A-HJKMNP-TV-Z]{26}$/.test(value)) return value;
  throw new UsageError(`${name} must be an account id (acc_ and 26 characters, as accounts create printed it), got "${value}"`);
}

/** Parses `argv` with the given string/boolean options; unknown flags are usage errors. */
export function parse<T extends Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>>(
  argv: string[],
  options: T,
  positionals = 0,
): { values: { [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string } & { help?: boolean }; positionals: string[] } {
  try {
    const r = parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
    if (r.positionals.length > positionals) throw new UsageError(`unexpected argument "${r.positionals[positionals]}"`);
    return r as never;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(e instanceof Error ? e.message.replace(/^TypeError \[\w+\]: /, "") : String(e));
  }
}

/** An integer flag within bounds, or a usage error naming it. */
export function intFlag(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** A timestamp flag: ISO 8601 with a time zone, or a usage error naming it. */
export function isoFlag(name: string, value: string): string {
  // isCalendarTime: Date.parse would take 2026-02-30 as 2 March.
  if (ISO.test(value) && isCalendarTime(value) && !Number.isNaN(Date.parse(value))) return value;
  throw new UsageError(`--${name} must be an ISO 8601 time with a time zone that exists, e.g. 2026-11-01T00:00:00Z, got ${JSON.stringify(value)}`);
}

/** A database URL without its password, for logs. */
export function redactDb(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}
