/**
 * The console API from the page, through @benchdata/client: same origin, the session in its HttpOnly cookie (the
 * page never sees the token; the client sends no Authorization without one), and the console header the server's
 * CSRF check wants (the client adds it to every console request). Types come from the client, which generates
 * them from the server's OpenAPI document.
 */
import { BenchdataError, createClient } from "@benchdata/client";
import type { DataOf } from "@benchdata/client";

/** An error answer of the API (the contract's `{detail, code, status}`), or a `client.*` failure (status 0). */
export { BenchdataError as ApiError };

/** The client of this page's own origin (the operation functions take it first; a bundle keeps only those used). */
export const client = createClient({ baseUrl: location.origin });

/** Called when the session is gone (401): the page goes back to sign-in with this message. */
let onSignedOut: (message: string) => void = () => {};
export function whenSignedOut(f: (message: string) => void): void {
  onSignedOut = f;
}

/** The body of a call's answer; a 401 outside sign-in signs the page out, a transport failure gets a plain message. */
export async function call<T>(pending: Promise<{ data: T }>, options: { signIn?: boolean } = {}): Promise<T> {
  try {
    return (await pending).data;
  } catch (e) {
    if (e instanceof BenchdataError && e.status === 0) {
      throw new BenchdataError({ status: 0, code: e.code, detail: "The server could not be reached. Check your connection and try again.", cause: e });
    }
    if (e instanceof BenchdataError && e.status === 401 && options.signIn !== true) onSignedOut("Your session has ended or is not valid any more. Sign in again.");
    throw e;
  }
}

export type Account = DataOf<"getConsoleAccount">;
/** A key, with `last_used_at` (the minute of its latest data request, or null: never). */
export type Key = DataOf<"getKey">;
/** A webhook; `status` and `disabled_reason` where the server reports them. */
export type Webhook = DataOf<"getWebhook"> & { status?: string; disabled_reason?: string | null };
export type Delivery = DataOf<"listDeliveries">["data"][number];
export type Usage = DataOf<"getUsageSummary">;
export type Breakdown = DataOf<"getUsageBreakdown">;
export type Invoice = DataOf<"listInvoices">["data"][number];
export type TestResult = DataOf<"testWebhooks">;
export type AuditEntry = DataOf<"listAudit">["data"][number];
export type Environments = DataOf<"getConsoleEnvironments">;
