import type { Storage } from "@benchdata/core";

/** A Storage kept in an SQL database, saying which. */
export interface SqlStorage extends Storage {
  readonly kind: "sqlite" | "postgres";
}
