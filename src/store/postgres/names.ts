/**
 * A name as looked up: PostgreSQL text cannot hold NUL, and no valid name holds a control character,
 * so a name with NUL is looked up as one that can never exist (not found, as on SQLite).
 */
export function pgName(name: string): string {
  return typeof name === "string" && name.includes("\u0000") ? name.replace(/\u0000/g, "\u0001") : name;
}
