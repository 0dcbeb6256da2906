// Runs checks.ts under another runtime (Bun, Deno): `<runtime> run-checks.ts <baseUrl> <adminToken> <label>`.
// Prints one JSON line with the report, or exits 1 with the failure.
import { runChecks } from "./checks.ts";

declare const Deno: { args: string[]; exit(code: number): never } | undefined;
declare const process: { argv: string[]; exit(code: number): never } | undefined;

const args = typeof Deno !== "undefined" ? Deno.args : process!.argv.slice(2);
const exit = (code: number): never => (typeof Deno !== "undefined" ? Deno.exit(code) : process!.exit(code));
const [baseUrl, adminToken, label] = args as [string, string, string];
try {
  const report = await runChecks({ baseUrl, adminToken }, label);
  console.log(JSON.stringify(report));
  exit(0);
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  exit(1);
}
