/**
 * @benchdata/console: the browser console's built files, for `createApp({ consoleUi: CONSOLE_ASSETS })` of
 * `@benchdata/core/http`. The page's sources are in `app/` (plain TypeScript and the DOM over
 * `@benchdata/client`); `scripts/build-console.mjs` bundles them into `assets.generated.ts`.
 */
export { CONSOLE_ASSETS } from "./assets.generated.ts";
