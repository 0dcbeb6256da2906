import { defineConfig } from "tsup";

export default defineConfig({
  entry: { cli: "src/main.ts" },
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: true,
  platform: "node",
  target: "node20",
});
