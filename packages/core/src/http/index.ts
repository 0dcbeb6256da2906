/**
 * @benchdata/core/http: the HTTP service as a Web-standard fetch handler. `createApp({ storage, … })` returns
 * `{ fetch }` for any runtime's server (node:http through adapter-node, Bun.serve, Deno.serve, Workers).
 */
export type { App, RouteInfo } from "./create-app.ts";
export { createApp, DATA_BASE, ErrorBodySchema } from "./create-app.ts";
export type { AppHooks, AppOptions, ClientInfo, ConsoleAuth, WebhookCapabilities } from "./app-options.ts";
export type { ConsoleAsset, ConsoleAssets } from "./console-ui/console-ui.ts";
export type { OpenApiDocument } from "./openapi/openapi.ts";
export { CONSOLE_BASE, sessionTokenAuth } from "./console/define-console-route.ts";
export { ADMIN_BASE } from "./admin/admin-routes.ts";
export { MAX_BODY_BYTES } from "./read-json-body.ts";
export { checkUrlSyntax } from "./console/webhook-url.ts";
export type { Cidr } from "../net/cidr.ts";
export { cidrContains, ipInRanges, parseCidr, parseIp } from "../net/cidr.ts";
export type { ConfigFile, ConfigResult } from "../config/config-schema.ts";
export { ConfigFileSchema, resolveConfig } from "../config/config-schema.ts";
