/** One numbered step of the PostgreSQL schema. `sql` runs inside the broker's schema (search_path). */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}
