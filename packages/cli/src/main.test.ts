import { DEFAULT_CONFIG } from "@benchdata/core";
import { describe, expect, it } from "vitest";
import { ConfigError } from "./config-file.ts";
import { withShutdownEnv } from "./commands/serve.ts";

describe("withShutdownEnv", () => {
  it("takes shutdown.drainDelaySeconds and drainTimeoutSeconds from their variables, which win over the file", () => {
    const config = withShutdownEnv(DEFAULT_CONFIG, { BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: "10", BENCHDATA_SHUTDOWN_DRAIN_TIMEOUT_SECONDS: "2.5" });
    expect(config.shutdown).toEqual({ drainDelaySeconds: 10, drainTimeoutSeconds: 2.5 });
    expect(DEFAULT_CONFIG.shutdown).toEqual({ drainDelaySeconds: 0, drainTimeoutSeconds: 30 });
  });

  it("leaves the config as it is when the variables are unset or empty", () => {
    expect(withShutdownEnv(DEFAULT_CONFIG, {})).toBe(DEFAULT_CONFIG);
    expect(withShutdownEnv(DEFAULT_CONFIG, { BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: "" })).toBe(DEFAULT_CONFIG);
  });

  it("refuses a value that is not a number of seconds within the file's bounds, naming the variable", () => {
    for (const bad of ["-1", "ten", "1e3", "601"]) {
      expect(() => withShutdownEnv(DEFAULT_CONFIG, { BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: bad })).toThrow(ConfigError);
      expect(() => withShutdownEnv(DEFAULT_CONFIG, { BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS: bad })).toThrow(/BENCHDATA_SHUTDOWN_DRAIN_DELAY_SECONDS/);
    }
    expect(() => withShutdownEnv(DEFAULT_CONFIG, { BENCHDATA_SHUTDOWN_DRAIN_TIMEOUT_SECONDS: "3601" })).toThrow(/from 0 to 3600/);
  });
});
