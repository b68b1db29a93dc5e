import type { SqliteDatabase } from "../database.js";

/**
 * A numbered, forward-only schema change, applied in one transaction in version order: its `sql`,
 * or its `apply` for a change plain SQL cannot make.
 */
export type Migration = {
  version: number;
  name: string;
} & ({ sql: string; apply?: never } | { apply: (db: SqliteDatabase) => void; sql?: never });
