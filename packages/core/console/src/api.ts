/**
 * The console API from the page: same origin, the session in its HttpOnly cookie (the page never sees the
 * token), and the console header on every request that changes state (the server's CSRF check).
 */

/** An error answer of the API: the contract's `{detail, code, status}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const BASE = "/api/v1/console";

/** Called when the session is gone (401): the page goes back to sign-in with this message. */
let onSignedOut: (message: string) => void = () => {};
export function whenSignedOut(f: (message: string) => void): void {
  onSignedOut = f;
}

export async function api<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") headers["x-benchdata-console"] = "1";
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(BASE + path, { method, headers, credentials: "same-origin", ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection and try again.");
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === "" ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const e = (json ?? {}) as { code?: string; detail?: string };
    const err = new ApiError(res.status, e.code ?? "error", e.detail ?? `The server answered ${res.status}.`);
    if (res.status === 401 && path !== "/sign-in") onSignedOut("Your session has ended or is not valid any more. Sign in again.");
    throw err;
  }
  return json as T;
}

export interface Account {
  account_id: string;
  name: string;
  tier: string;
  permitted_scopes: string[];
  limits: { per_minute: number; per_day: number; monthly_quota: number; block_size: number; block_price: number };
  currency: string;
  session_expires_at: string | null;
}
export interface Key {
  key_id: string;
  name: string;
  environment: "live" | "test";
  scopes: string[];
  is_active: boolean;
  prefix: string;
  created_at: string;
  rotated_at: string | null;
  revoked_at: string | null;
  rotation_due: boolean;
  last_used_at?: string | null;
}
export interface Webhook {
  webhook_id: string;
  url: string;
  events: string[];
  created_at: string;
  status?: string;
  disabled_reason?: string | null;
}
export interface Attempt {
  attempt: number;
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}
export interface Delivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  attempts: Attempt[];
}
export interface Usage {
  today: number;
  daily_limit: number;
  month: number;
  monthly_limit: number;
  token_balance: number;
  active_keys: number;
  period_start: string;
  period_end: string;
  quota_exhausted: boolean;
}
export interface Invoice {
  invoice_id: string;
  status: string;
  amount: number;
  currency: string;
  block: number;
  attempt: number;
  failure_reason: string | null;
  created_at: string;
  resolved_at: string | null;
}
export interface TestResult {
  event_id: string;
  results: { webhook_id: string; url: string; ok: boolean; response_status: number | null; duration_ms: number; error: string | null }[];
}
