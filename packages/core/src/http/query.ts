/**
 * Query strings through valibot: the string map is parsed by an object schema, and each failure becomes the
 * contract's 422 code (missing, out of range, invalid category or metric, or otherwise invalid).
 */
import * as v from "valibot";
import { ServiceError } from "../errors/service-error.ts";

/** An object schema over a query's string values, as every query schema is. */
export type QuerySchema = v.ObjectSchema<v.ObjectEntries, undefined>;

/** How to word an invalid value of a parameter (after "`name` "), and its bounds when it has any. */
export interface ParamRule {
  readonly expect: string;
  /** Inclusive bounds: failing them is `validation.out_of_range`, never clamped. */
  readonly range?: readonly [number, number];
  /** A code other than `validation.invalid_parameter` for a bad value, with its whole detail. */
  readonly invalid?: (value: string) => ServiceError;
}

const rules = new WeakMap<v.GenericSchema, ParamRule>();

/** Attaches the wording and code of a parameter's errors to its schema. */
export function param<S extends v.GenericSchema>(schema: S, rule: ParamRule): S {
  rules.set(schema, rule);
  return schema;
}

function decodeComponent(text: string): string {
  if (text.indexOf("%") < 0 && text.indexOf("+") < 0) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    // Broken escapes are kept as given; the parameter's schema then refuses the value if it matters.
    return text;
  }
}

/**
 * The first value of each name in a query string (`+` is a space, later repeats are ignored). `names` maps
 * the names a caller expects to the string to use as the key (its own), which only makes lookups faster.
 */
export function queryValues(search: string, names?: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let start = 0;
  while (start < search.length) {
    let end = search.indexOf("&", start);
    if (end < 0) end = search.length;
    if (end > start) {
      const eq = search.indexOf("=", start);
      const hasValue = eq >= 0 && eq < end;
      let name = decodeComponent(search.slice(start, hasValue ? eq : end));
      name = names?.get(name) ?? name;
      if (!(name in out)) out[name] = hasValue ? decodeComponent(search.slice(eq + 1, end)) : "";
    }
    start = end + 1;
  }
  return out;
}

// A name sliced from the URL is a new string on every request, which V8 must look up in its string table
// each time it is used as a property key (`in`, the store, valibot's reads). The schema's own key strings
// are already there: a Map lookup swaps them in. Only the schema's names, so nothing a client sends is kept.
const schemaNames = new WeakMap<QuerySchema, ReadonlyMap<string, string>>();

function namesOf(schema: QuerySchema): ReadonlyMap<string, string> {
  let names = schemaNames.get(schema);
  if (names === undefined) schemaNames.set(schema, (names = new Map(Object.keys(schema.entries).map((name) => [name, name]))));
  return names;
}

const ABORT_EARLY = { abortEarly: true } as const;

/** Parses a query string with an object schema, or throws the 422 of its first problem (in declaration order). */
export function parseQuery<S extends QuerySchema>(schema: S, search: string): v.InferOutput<S> {
  const values = queryValues(search, namesOf(schema));
  const result = v.safeParse(schema, values, ABORT_EARLY);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const name = String(issue.path?.[0]?.key ?? "");
  if (!(name in values)) return missingParameter(name);
  const raw = values[name] as string;
  const entry = schema.entries[name];
  const inner = entry && "wrapped" in entry ? (entry as unknown as { wrapped: v.GenericSchema }).wrapped : entry;
  const rule = inner ? rules.get(inner) : undefined;
  if (rule?.range && (issue.type === "min_value" || issue.type === "max_value")) {
    throw new ServiceError(422, "validation.out_of_range", `\`${name}\` must be from ${rule.range[0]} to ${rule.range[1]}; got ${quote(raw)}.`);
  }
  if (rule?.invalid) throw rule.invalid(raw);
  throw new ServiceError(422, "validation.invalid_parameter", `\`${name}\` ${rule?.expect ?? "is invalid"}; got ${quote(raw)}.`);
}

function missingParameter(name: string): never {
  throw new ServiceError(422, "validation.missing_parameter", `Missing required query parameter \`${name}\`.`);
}

/** A client's value, quoted and cut short for an error detail. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
