import { describe, expect, it } from "vitest";
import { jsonLogger, redact } from "./logger.ts";

describe("logger", () => {
  const key = "svc_live_" + "Ab3-_".repeat(9) + "xyz";
  const session = "bds_sess_" + "Q".repeat(48);
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  it("redaction keeps only the fixed prefix: not one character of a key, session token or signing secret", () => {
    expect(redact(`k=${key} s=${session} w=${secret}`)).toBe("k=svc_live_…[redacted] s=bds_sess_…[redacted] w=whsec_…[redacted]");
    expect(redact(secret)).not.toContain("MfK");
  });

  it("jsonLogger writes one JSON line per entry with secrets in messages and fields redacted", () => {
    const lines: string[] = [];
    const log = jsonLogger((l) => lines.push(l), () => Date.UTC(2026, 10, 16));
    log.warn(`bad key ${key}`, { secret, n: 1, skip: undefined });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toEqual({ time: "2026-11-16T00:00:00.000Z", level: "warn", msg: "bad key svc_live_…[redacted]", secret: "whsec_…[redacted]", n: 1 });
  });
});
