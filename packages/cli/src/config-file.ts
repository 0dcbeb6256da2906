/** Loads and validates the JSON config file (`--config` or BENCHDATA_CONFIG); a bad file stops the start. */
import { readFile } from "node:fs/promises";
import type { ServiceConfig } from "@benchdata/core";
import { DEFAULT_CONFIG } from "@benchdata/core";
import { resolveConfig } from "@benchdata/core/http";

/** A config file that cannot be used; the message names the file and every offending key. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads, parses and validates the config file; no file means every default. */
export async function loadConfig(path: string | undefined): Promise<ServiceConfig> {
  if (!path) return DEFAULT_CONFIG;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  const r = resolveConfig(raw);
  if (!r.ok) throw new ConfigError(`config file ${path} is invalid:\n  ${r.errors.join("\n  ")}`);
  return r.config;
}
