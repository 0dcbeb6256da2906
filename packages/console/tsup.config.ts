import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: false,
  // The built files as strings: runs anywhere core does.
  platform: "neutral",
  target: "es2022",
});
