/** What every `benchdata` command is: its usage text and how it runs. */

/** One command of the CLI: `benchdata <name> …`. */
export interface Command {
  /** Shown by `--help` and after a usage error. */
  readonly usage: string;
  /** Runs with the arguments after the command's name; resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

/** Prints a command's usage to stdout; exit code 0. */
export function printUsage(usage: string): number {
  process.stdout.write(`${usage}\n`);
  return 0;
}

/** Prints a JSON result, indented, to stdout. */
export function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
