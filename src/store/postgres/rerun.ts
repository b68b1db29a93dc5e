/**
 * Thrown by a statement of a verb run alone (one autocommit statement, no transaction) when the
 * verb must run again before it changed anything: with a fresh queue row (the cached one was
 * stale), or in a transaction (`inTransaction`: it needs locks or several statements).
 */
export class Rerun extends Error {
  constructor(readonly inTransaction: boolean) {
    super("mqlite: run the verb again");
  }
}
