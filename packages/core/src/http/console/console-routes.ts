/** Every console operation, in the order the OpenAPI document lists them. */
import { consoleListAudit } from "../audit/audit-routes.ts";
import { listInvoices, retryBilling } from "./billing.ts";
import type { AnyConsoleRoute } from "./define-console-route.ts";
import { getEnvironments } from "./environments.ts";
import { createKey, getKey, listKeys, revokeKey, rotateKey } from "./keys.ts";
import { getAccount, signIn, signOut } from "./sign-in.ts";
import { usageDaily, usageSummary } from "./usage.ts";
import { usageBreakdownRoute } from "./usage-breakdown.ts";
import { createWebhook, deleteWebhook, enableWebhook, getWebhook, listDeliveries, listWebhooks, recoverWebhook, retryDelivery, rotateWebhookSecret, testWebhooks } from "./webhooks.ts";

/** The console routes under `/api/v1/console`. */
export const CONSOLE_ROUTES: readonly AnyConsoleRoute[] = [
  signIn,
  signOut,
  getAccount,
  getEnvironments,
  createKey,
  listKeys,
  getKey,
  rotateKey,
  revokeKey,
  usageSummary,
  usageDaily,
  usageBreakdownRoute,
  createWebhook,
  listWebhooks,
  testWebhooks,
  getWebhook,
  deleteWebhook,
  enableWebhook,
  rotateWebhookSecret,
  listDeliveries,
  retryDelivery,
  recoverWebhook,
  listInvoices,
  retryBilling,
  consoleListAudit,
];
