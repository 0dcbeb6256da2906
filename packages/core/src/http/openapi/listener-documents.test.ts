import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../storage/memory-storage.ts";
import { createApp } from "../create-app.ts";
import type { App } from "../create-app.ts";

type Doc = { paths: Record<string, Record<string, unknown>>; tags: { name: string }[] };
const ADMIN = "admin-token-for-listener-documents-0123";

const operations = (doc: Doc): string[] => Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)).sort();

async function documentOf(fetch: App["fetch"]): Promise<Doc> {
  const r = await fetch(new Request("http://127.0.0.1:8787/openapi.json"));
  expect(r.status).toBe(200);
  const doc = (await r.json()) as Doc;
  const valid = await new Validator().validate(doc as never);
  expect(valid.errors).toBeUndefined();
  return doc;
}

/** Whether `fetch` routes the operation (any answer but the router's own 404 or 405 for a path it does not serve). */
async function serves(fetch: App["fetch"], operation: string): Promise<boolean> {
  const [method, template] = operation.split(" ") as [string, string];
  const path = template.replace(/\{[^}]+\}/g, "x");
  const r = await fetch(new Request(`http://127.0.0.1:8787${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } }));
  if (r.status !== 404 && r.status !== 405) return true;
  const body = (await r.json()) as { code: string; detail: string };
  return !(body.code === "method_not_allowed" || /No route|own listener|not enabled/.test(body.detail));
}

/** Every operation the app defines is listed in `fetch`'s document exactly when `fetch` serves it. */
async function listsWhatItServes(app: App, fetch: App["fetch"]): Promise<string[]> {
  const listed = operations(await documentOf(fetch));
  for (const op of operations(app.openapi as Doc)) expect(await serves(fetch, op), op).toBe(listed.includes(op));
  return listed;
}

describe("each listener's /openapi.json lists the operations it serves (issue 29)", () => {
  it("with the admin API on a listener of its own: the main document has no admin operation; the admin listener's has the admin operations and itself", async () => {
    const app = createApp({ storage: createMemoryStorage(), adminToken: ADMIN, adminSeparate: true });
    const main = await listsWhatItServes(app, app.fetch);
    expect(main.filter((op) => op.includes("/api/v1/admin/"))).toEqual([]);
    expect(main).toEqual(expect.arrayContaining(["GET /data/v1/benchmarks", "POST /api/v1/console/keys", "GET /healthz", "GET /openapi.json"]));
    const admin = await listsWhatItServes(app, app.adminFetch);
    expect(admin.every((op) => op.includes(" /api/v1/admin/") || op === "GET /openapi.json")).toBe(true);
    expect(admin).toEqual(expect.arrayContaining(["POST /api/v1/admin/accounts", "GET /openapi.json"]));
    // Together they are every operation the app defines, nothing twice but the document itself.
    expect([...new Set([...main, ...admin])].sort()).toEqual(operations(app.openapi as Doc));
    expect(((await documentOf(app.adminFetch)).tags).map((t) => t.name)).toEqual(["Admin", "Service"]);
  });

  it("with one listener: its document lists everything it serves, the admin API included", async () => {
    const app = createApp({ storage: createMemoryStorage(), adminToken: ADMIN });
    expect(await listsWhatItServes(app, app.fetch)).toEqual(operations(app.openapi as Doc));
  });

  it("without an admin token the admin API is off, and not listed", async () => {
    const app = createApp({ storage: createMemoryStorage() });
    const listed = await listsWhatItServes(app, app.fetch);
    expect(listed.filter((op) => op.includes("/api/v1/admin/"))).toEqual([]);
    // The app's own document (what the client is generated from) still describes every operation.
    expect(operations(app.openapi as Doc)).toContain("POST /api/v1/admin/accounts");
  });
});
