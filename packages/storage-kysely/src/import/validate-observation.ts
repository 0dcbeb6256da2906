/** Checks one raw import row against the catalogue and turns it into a StagedRow, or says why not. */
import { isCategory, isMetric, metricsOf, offersMetric, parsePeriod } from "@benchdata/core";
import type { StagedRow } from "./staging.ts";

/** The columns every import row has. */
export const IMPORT_COLUMNS = ["business_id", "category", "segment", "period", "metric", "value"] as const;

/** A raw row: the six columns as they came (CSV gives strings, NDJSON anything). */
export type RawObservation = { readonly [K in (typeof IMPORT_COLUMNS)[number]]?: unknown };

/** An import that failed on a row (or the file's shape): `line` is the 1-based line of the file. */
export class ImportError extends Error {
  readonly code = "import.invalid_row";
  readonly line: number | null;

  constructor(line: number | null, message: string) {
    super(line === null ? message : `line ${line}: ${message}`);
    this.name = "ImportError";
    this.line = line;
  }
}

// Lower-case words of letters and digits joined by `_`, `-` or `.`: what the API's `segment` parameter can ask for.
const SEGMENT = /^[a-z0-9]+(?:[_.-][a-z0-9]+)*$/;
// A plain decimal number; Number() alone would also accept "", "0x1f" and "Infinity".
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const MAX_ID = 200;

function text(raw: RawObservation, column: (typeof IMPORT_COLUMNS)[number], line: number): string {
  const v = raw[column];
  if (v === undefined || v === null) throw new ImportError(line, `missing ${column}`);
  if (typeof v !== "string" && !(column === "business_id" && typeof v === "number")) throw new ImportError(line, `${column} must be a string`);
  const s = String(v).trim();
  if (s === "") throw new ImportError(line, `empty ${column}`);
  return s;
}

/** Validates one raw row of the file at `line`. */
export function validateObservation(raw: RawObservation, line: number): StagedRow {
  const businessId = text(raw, "business_id", line);
  if (businessId.length > MAX_ID) throw new ImportError(line, `business_id longer than ${MAX_ID} characters`);
  const category = text(raw, "category", line);
  if (!isCategory(category)) throw new ImportError(line, `unknown category "${category}"`);
  const segment = text(raw, "segment", line);
  if (segment === "all") throw new ImportError(line, `segment "all" is reserved for the aggregate of every segment`);
  if (segment.length > 64 || !SEGMENT.test(segment)) throw new ImportError(line, `invalid segment "${segment}" (lower-case letters and digits joined by "_", "-" or ".", at most 64 characters)`);
  const period = text(raw, "period", line);
  if (!parsePeriod(period)) throw new ImportError(line, `invalid period "${period}" (YYYY-Qn or YYYY-MM)`);
  const metric = text(raw, "metric", line);
  if (!isMetric(metric)) throw new ImportError(line, `unknown metric "${metric}"`);
  if (!offersMetric(category, metric)) throw new ImportError(line, `metric "${metric}" is not offered by category "${category}" (offered: ${metricsOf(category).join(", ")})`);
  const rawValue = raw.value;
  let value: number;
  if (typeof rawValue === "number") value = rawValue;
  else if (typeof rawValue === "string" && DECIMAL.test(rawValue.trim())) value = Number(rawValue.trim());
  else throw new ImportError(line, `value ${rawValue === undefined || rawValue === "" ? "is missing" : `"${String(rawValue)}" is not a number`}`);
  if (!Number.isFinite(value)) throw new ImportError(line, `value ${String(rawValue)} is not a finite number`);
  return { line, businessId, category, segment, period, metric, value };
}
