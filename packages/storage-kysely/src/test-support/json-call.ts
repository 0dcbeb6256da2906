// A JSON request to an app instance, for the HTTP tests that drive apps over a store: the bearer token, a JSON
// body when given, and the answer's status and parsed body (null when empty).
import type { createApp } from "@benchdata/core/http";

/** A parsed answer. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonReply = { status: number; body: any };

/** `method url` on `app` with `Authorization: Bearer auth` (none when null) and `body` as JSON. */
export async function jsonCall(
  app: ReturnType<typeof createApp>,
  method: string,
  url: string,
  auth: string | null,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<JsonReply> {
  const headers: Record<string, string> = { ...(auth === null ? {} : { authorization: `Bearer ${auth}` }), ...extra };
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await app.fetch(new Request(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
  const text = await r.text();
  return { status: r.status, body: text === "" ? null : JSON.parse(text) };
}
