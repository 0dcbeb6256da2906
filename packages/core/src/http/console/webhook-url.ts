/** The syntactic webhook URL check, used when no full (DNS-aware) check is injected and before it. */
import { ServiceError } from "../../errors/service-error.ts";

/** 422 `validation.invalid_url` unless `url` is an absolute https URL (or http with `allowHttp`) without credentials. */
export function checkUrlSyntax(url: string, allowHttp: boolean): ServiceError | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return invalidUrl("it is not a valid absolute URL");
  }
  if (u.protocol !== "https:" && !(allowHttp && u.protocol === "http:")) return invalidUrl(allowHttp ? "it must use https or http" : "it must use https");
  if (u.username !== "" || u.password !== "") return invalidUrl("it must not contain a user name or password");
  if (u.hostname === "") return invalidUrl("it has no host");
  return null;
}

function invalidUrl(why: string): ServiceError {
  return new ServiceError(422, "validation.invalid_url", `Invalid webhook URL: ${why}.`);
}
