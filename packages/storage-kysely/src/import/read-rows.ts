/** Streams raw rows, each with its line number, out of a CSV (header row first) or NDJSON source. */
import { CsvError, parse } from "csv-parse";
import { IMPORT_COLUMNS, ImportError } from "./validate-observation.ts";
import type { RawObservation } from "./validate-observation.ts";

/** The formats `benchdata import` reads. */
export type ImportFormat = "csv" | "ndjson";

/**
 * What an import reads: a Node or Web stream of bytes or text, or an (async) iterable of lines (each item
 * one line, without or with its line break).
 */
export type ImportSource = NodeJS.ReadableStream | ReadableStream<Uint8Array | string> | AsyncIterable<string> | Iterable<string>;

/** A raw row and the 1-based line it starts on. */
export interface RawRow {
  readonly line: number;
  readonly raw: RawObservation;
}

function isByteStream(source: ImportSource): source is NodeJS.ReadableStream | ReadableStream<Uint8Array | string> {
  const s = source as { pipe?: unknown; getReader?: unknown };
  return typeof s.pipe === "function" || typeof s.getReader === "function";
}

/** The source as chunks of text or bytes, counting the bytes that went by. */
async function* chunksOf(source: ImportSource, countBytes: (n: number) => void): AsyncGenerator<string | Uint8Array> {
  if (isByteStream(source)) {
    for await (const chunk of source as AsyncIterable<string | Uint8Array>) {
      countBytes(typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength);
      yield chunk;
    }
    return;
  }
  for await (const line of source as AsyncIterable<string>) {
    const text = line.endsWith("\n") ? line : `${line}\n`;
    countBytes(Buffer.byteLength(text));
    yield text;
  }
}

// Rows are handed on in batches (one per chunk read), so a million rows cost a few hundred awaits, not millions.

async function* csvRows(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<RawRow[]> {
  // No `info`/`skip_empty_lines`: csv-parse's per-record line bookkeeping doubles its cost, and lines are
  // easy to count here: a record spans one line plus the line breaks inside its quoted fields, and an
  // empty line comes through as one empty field.
  const parser = parse({ bom: true, relax_column_count: true });
  /** The index of each of IMPORT_COLUMNS in the file's header. */
  let columns: number[] | null = null;
  let width = 0;
  let nextLine = 1;
  let batch: RawRow[] = [];
  let failure: unknown = null;
  parser.on("error", (e) => (failure ??= e));
  // Records arrive synchronously while a chunk is parsed; each becomes a raw row (or, first, the header).
  parser.on("data", (record: string[]) => {
    if (failure !== null) return;
    const line = nextLine;
    nextLine += 1;
    for (const field of record) for (let i = field.indexOf("\n"); i >= 0; i = field.indexOf("\n", i + 1)) nextLine += 1;
    if (record.length === 1 && record[0] === "") return;
    if (columns === null) {
      const names = record.map((h) => h.trim().toLowerCase());
      const missing = IMPORT_COLUMNS.filter((c) => !names.includes(c));
      const repeated = IMPORT_COLUMNS.filter((c) => names.indexOf(c) !== names.lastIndexOf(c));
      if (missing.length > 0) failure = new ImportError(line, `the header row lacks column(s) ${missing.join(", ")} (expected ${IMPORT_COLUMNS.join(", ")})`);
      else if (repeated.length > 0) failure = new ImportError(line, `the header row repeats column(s) ${repeated.join(", ")}`);
      else columns = IMPORT_COLUMNS.map((name) => names.indexOf(name));
      width = record.length;
      return;
    }
    if (record.length !== width) {
      failure = new ImportError(line, `invalid CSV: ${record.length} fields where the header has ${width}`);
      return;
    }
    const [b, c, sg, p, m, v] = columns;
    batch.push({ line, raw: { business_id: record[b!], category: record[c!], segment: record[sg!], period: record[p!], metric: record[m!], value: record[v!] } });
  });
  const done = new Promise<void>((resolve) => parser.once("end", resolve).once("error", () => resolve()));
  const feed = (chunk?: string | Uint8Array): Promise<void> =>
    new Promise((resolve) => {
      const after = (e?: Error | null): void => {
        if (e) failure ??= e;
        resolve();
      };
      if (chunk === undefined) parser.end(after);
      else parser.write(chunk, after);
    });
  const check = (): void => {
    if (failure === null) return;
    if (failure instanceof CsvError) {
      const at = (failure as unknown as { lines?: number }).lines;
      throw new ImportError(typeof at === "number" ? at : null, `invalid CSV: ${failure.message}`);
    }
    throw failure;
  };
  try {
    for await (const chunk of chunks) {
      await feed(chunk);
      check();
      if (batch.length > 0) {
        yield batch;
        batch = [];
      }
    }
    await feed();
    await done;
    check();
    if (batch.length > 0) yield batch;
  } finally {
    parser.destroy();
  }
}

async function* ndjsonRows(chunks: AsyncIterable<string | Uint8Array>): AsyncGenerator<RawRow[]> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let rest = "";
  let line = 0;
  const parseLine = (text: string): RawRow | null => {
    line += 1;
    const trimmed = (line === 1 ? text.replace(/^\uFEFF/, "") : text).trim();
    if (trimmed === "") return null;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      throw new ImportError(line, `invalid JSON: ${(e as Error).message}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ImportError(line, "each line must be a JSON object");
    return { line, raw: value as RawObservation };
  };
  const decode = (chunk?: string | Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    } catch {
      throw new ImportError(line + 1, "the file is not valid UTF-8");
    }
  };
  for await (const chunk of chunks) {
    const text = rest + decode(chunk);
    const batch: RawRow[] = [];
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl >= 0; nl = text.indexOf("\n", start)) {
      const row = parseLine(text.slice(start, nl));
      start = nl + 1;
      if (row) batch.push(row);
    }
    rest = text.slice(start);
    if (batch.length > 0) yield batch;
  }
  rest += decode();
  if (rest !== "") {
    const row = parseLine(rest);
    if (row) yield [row];
  }
}

/** The raw rows of `source` in `format` (in batches), each with its line; `countBytes` sees the bytes as they are read. */
export function readRows(source: ImportSource, format: ImportFormat, countBytes: (n: number) => void = () => {}): AsyncGenerator<RawRow[]> {
  const chunks = chunksOf(source, countBytes);
  return format === "csv" ? csvRows(chunks) : ndjsonRows(chunks);
}
