/** One versioned schema change, defined in code and applied once, in order, by `migrate()`. */
export interface Migration {
  /** Applied in ascending order; recorded in `benchdata_migrations`. */
  readonly version: number;
  readonly name: string;
  /** The statements, run in one transaction. */
  readonly sql: string;
}
