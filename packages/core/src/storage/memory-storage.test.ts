import { storageConformance } from "../testing/storage-conformance.ts";
import { createMemoryStorage } from "./memory-storage.ts";

storageConformance("memory", { create: async () => createMemoryStorage() });
