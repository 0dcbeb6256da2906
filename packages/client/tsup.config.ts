import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: true,
  // Web APIs only (fetch, WebCrypto, AbortController): one neutral bundle for Node, Bun, Deno and browsers.
  platform: "neutral",
  target: "es2022",
  treeshake: true,
});
