export { serve } from "./serve.ts";
export type { FetchHandler, RequestContext, ServeHandle, ServeOptions } from "./serve.ts";
