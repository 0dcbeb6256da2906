import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { NativeResponse, nativeResponse, simpleResponseParts } from "./bridge-response.ts";

// Real Responses on Node 18–23 (undici) keep the body they were given in an internal `state.body.source`.
// Reading it saves a trip through the body stream for strings and bytes. The key is found once, and
// only trusted if a probe response shows exactly the shape expected; otherwise every real response
// goes through the public stream, which is slower but always right.
const stateKey = findStateKey();
/** Whether real Responses' string and byte bodies are read directly (Node 18-23) or through the stream (Node 24: chunked). */
export const runtimeBodiesReadable: boolean = stateKey !== undefined;

function findStateKey(): symbol | undefined {
  try {
    const probe = new NativeResponse("probe");
    for (const key of Object.getOwnPropertySymbols(probe)) {
      if (key.description !== "state") continue;
      const state = (probe as unknown as Record<symbol, { body?: { source?: unknown } }>)[key];
      if (state?.body?.source === "probe") return key;
    }
  } catch {
    // no usable internals
  }
  return undefined;
}

function internalSource(response: Response): string | Uint8Array | undefined {
  if (stateKey === undefined) return undefined;
  const state = (response as unknown as Record<symbol, { body?: { source?: unknown; stream?: ReadableStream } | null }>)[
    stateKey
  ];
  const body = state?.body;
  if (body === undefined || body === null || body.stream?.locked !== false || response.bodyUsed) return undefined;
  const source = body.source;
  return typeof source === "string" || source instanceof Uint8Array ? source : undefined;
}

function headersRecord(headers: Headers): OutgoingHttpHeaders {
  const record: OutgoingHttpHeaders = Object.create(null);
  // Iteration yields lower-case names and each Set-Cookie on its own, which is what node wants.
  for (const [name, value] of headers) {
    if (name === "set-cookie") {
      const cookies = record[name] as string[] | undefined;
      if (cookies === undefined) record[name] = [value];
      else cookies.push(value);
    } else {
      record[name] = value;
    }
  }
  return record;
}

function writeSimple(
  outgoing: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: string | Uint8Array | null,
  head: boolean,
  reason?: string,
): void {
  if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) {
    if (body !== null) {
      headers["content-length"] = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
    } else if (!head && status !== 204 && status !== 304 && status >= 200) {
      headers["content-length"] = 0;
    }
  }
  if (reason) outgoing.writeHead(status, reason, headers);
  else outgoing.writeHead(status, headers);
  if (body === null || head) outgoing.end();
  else outgoing.end(body);
}

function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      outgoing.off("drain", done);
      outgoing.off("close", done);
      resolve();
    };
    outgoing.on("drain", done);
    outgoing.on("close", done);
  });
}

async function writeStream(
  outgoing: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: ReadableStream<Uint8Array>,
  reason: string,
): Promise<void> {
  const reader = body.getReader();
  const onClose = (): void => {
    if (!outgoing.writableFinished) reader.cancel(new Error("the client closed the connection")).catch(() => {});
  };
  if (reason) outgoing.writeHead(status, reason, headers);
  else outgoing.writeHead(status, headers);
  // Send the head now: a stream may take its time (server-sent events), the client should not wait.
  outgoing.flushHeaders();
  outgoing.on("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || outgoing.destroyed) break;
      if (!outgoing.write(value)) await drained(outgoing);
    }
    if (!outgoing.destroyed) outgoing.end();
  } finally {
    outgoing.off("close", onClose);
    reader.releaseLock();
  }
}

/** Write a Response to node's ServerResponse: simple bodies in one `end`, streams with backpressure. */
export function bridgeWrite(response: Response, outgoing: ServerResponse, head: boolean): Promise<void> | undefined {
  const parts = simpleResponseParts(response);
  if (parts !== undefined) {
    writeSimple(outgoing, parts.status, parts.headers, parts.body, head);
    return undefined;
  }
  response = nativeResponse(response);
  const status = response.status;
  const reason = response.statusText;
  const headers = headersRecord(response.headers);
  const source = internalSource(response);
  if (source !== undefined) {
    writeSimple(outgoing, status, headers, source, head, reason);
    return undefined;
  }
  const body = response.body;
  if (body === null) {
    writeSimple(outgoing, status, headers, null, head, reason);
    return undefined;
  }
  if (head) {
    body.cancel().catch(() => {});
    writeSimple(outgoing, status, headers, null, head, reason);
    return undefined;
  }
  return writeStream(outgoing, status, headers, body, reason);
}
