import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: true,
  // Nothing here touches node: the output is plain ES2022 that Deno loads as is.
  platform: "neutral",
  target: "es2022",
});
