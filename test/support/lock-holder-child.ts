// Holds a SQLite write lock on a database from another process: BEGIN IMMEDIATE, prints LOCKED,
// keeps the transaction open for <ms>, commits, prints RELEASED.
// Usage: lock-holder-child.ts <dbPath> <ms>
import Database from "better-sqlite3";

const [path, ms] = process.argv.slice(2) as [string, string];
const db = new Database(path);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("LOCKED\n");
setTimeout(() => {
  db.exec("COMMIT");
  db.close();
  process.stdout.write("RELEASED\n");
}, Number(ms));
