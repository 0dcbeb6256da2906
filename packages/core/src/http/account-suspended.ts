/** The refusal every surface of a suspended account answers with: its keys' data requests, its console and its sign-in. */
import { ServiceError } from "../errors/service-error.ts";

/** 403 `account.suspended`: the operator suspended the account; nothing was deleted, and resuming restores it all. */
export const ACCOUNT_SUSPENDED = new ServiceError(
  403,
  "account.suspended",
  "This account is suspended by the service's operator: its API keys and console sessions are refused until the operator resumes it. Nothing was deleted. Contact the operator.",
);
