/** The embedder's hooks, guarded: a hook that throws is logged and ignored, never failing the request it follows. */
import type { Logger } from "../log/logger.ts";
import type { AppHooks } from "./app-options.ts";

/** Every hook present (a missing one does nothing), each catching and logging its own throw. */
export function safeHooks(hooks: AppHooks | undefined, logger: Logger): Required<AppHooks> {
  const guard =
    <A extends unknown[]>(name: string, fn: ((...args: A) => void) | undefined) =>
    (...args: A): void => {
      if (!fn) return;
      try {
        fn(...args);
      } catch (error) {
        logger.warn("hook failed", { hook: name, error: error instanceof Error ? error.message : String(error) });
      }
    };
  return { chargeRequested: guard("chargeRequested", hooks?.chargeRequested?.bind(hooks)), eventsWritten: guard("eventsWritten", hooks?.eventsWritten?.bind(hooks)) };
}
