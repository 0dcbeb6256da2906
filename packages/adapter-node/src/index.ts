export { hashSecretNode } from "./hash-secret-node.ts";
export { installShutdown, serve } from "./serve.ts";
export type { FetchHandler, RequestContext, ServeHandle, ServeOptions } from "./serve.ts";
export type { NodeTransport, NodeTransportOptions } from "./webhook-transport.ts";
export { nodeResolve, nodeTransport } from "./webhook-transport.ts";
export type { BridgeOptions } from "./bridge.ts";
export { bridge } from "./bridge.ts";
