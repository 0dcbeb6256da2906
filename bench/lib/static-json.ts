/** The fixed 300-byte JSON body every static target answers with, so their numbers compare. */
export const staticJson: string = (() => {
  const head = '{"segment":"saas/smb/eu","metric":"net_revenue_retention","period":"2026-Q3","p50":1.04,"p90":1.31,"sample":412,"note":"';
  const tail = '"}';
  return head + "x".repeat(300 - head.length - tail.length) + tail;
})();

/** Headers of the static response: JSON content type (the length is added by each server). */
export const staticHeaders: Record<string, string> = { "content-type": "application/json" };
