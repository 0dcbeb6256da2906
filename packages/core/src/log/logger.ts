/** Structured logging as a capability: one JSON line per entry, never containing raw keys or secrets. */

/** Fields attached to a log entry. */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** A structured logger. */
export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** A logger that drops everything (the default for embedders and tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

const SECRETISH = /(svc_(live|test)_[A-Za-z0-9_-]{10,}|whsec_[A-Za-z0-9+/=_-]+|bds_sess_[A-Za-z0-9_-]+)/g;

/** Replaces anything shaped like a raw key, session token or signing secret with its prefix and a marker. */
export function redact(text: string): string {
  // Keep only the fixed prefix (`svc_live_`, `bds_sess_`, `whsec_`): no character of the secret itself.
  return text.replace(SECRETISH, (m) => `${m.startsWith("whsec_") ? "whsec_" : m.slice(0, 9)}…[redacted]`);
}

/** A logger writing one JSON object per line through `write` (e.g. to stdout), with secrets redacted. */
export function jsonLogger(write: (line: string) => void, now: () => number = Date.now): Logger {
  const emit = (level: string, message: string, fields?: LogFields): void => {
    const entry: Record<string, unknown> = { time: new Date(now()).toISOString(), level, msg: message };
    if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined) entry[k] = v;
    write(redact(JSON.stringify(entry)));
  };
  return {
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}
