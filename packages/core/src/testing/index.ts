/** Test helpers for implementers of benchdata's contracts: the shared storage conformance suite. */
export type { ConformanceTarget } from "./storage-conformance.ts";
export { storageConformance } from "./storage-conformance.ts";
