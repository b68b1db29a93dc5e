/** A numbered, forward-only schema change. Applied in one transaction, in version order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
