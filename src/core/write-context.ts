/** What a write sees while it runs inside the shared transaction. */
export interface WriteContext {
  /** Runs `fn` after the transaction commits (never if it rolls back): wake waiters, bump counters. */
  afterCommit(fn: () => void): void;
  /**
   * Runs `fn` in the same transaction after every write of the group, just before the commit, in a
   * savepoint of its own: a hook that throws is undone and ignored (the writes still commit). A
   * send uses it to hand its messages to parked receivers without a transaction of their own.
   */
  beforeCommit(fn: (ctx: WriteContext) => void): void;
  /** Runs `fn` if the transaction rolls back instead: what a hook promised before the commit is off. */
  afterRollback(fn: () => void): void;
}
