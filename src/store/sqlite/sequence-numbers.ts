import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";

/** Ids reserved per write of the reservation: one small write per this many rows. */
export const SEQUENCE_BLOCK = 1000;

/** The tables whose ids are reserved in `sequences`. */
export type SequenceName = "messages" | "topic_messages";

/**
 * Hands out the ids of a table (`messages`: sequence numbers; `topic_messages`: topic log
 * positions): unique, increasing in the order the inserts commit, never reused, even after the
 * newest row is deleted or the file is reopened.
 *
 * AUTOINCREMENT guarantees the same by writing its counter in every inserting transaction. Here the
 * counter is written once per block: `sequences.reserved` is the highest id anyone may have handed
 * out, and a writer takes ids below it from memory. After another connection's commit (seen at the
 * start of every transaction) or any rollback, `forget` makes the next `take` check the reservation
 * first: still ours (nobody reserved since, and our last reservation was not undone), the block goes
 * on; otherwise the next id starts above everything anyone reserved. A crash loses the rest of a
 * block, and a rolled-back write the ids it took: gaps in the numbers, never a reuse. A clean close
 * gives the rest of the block back.
 *
 * A new reservation is written just before the commit (`flush`), not when it is made: the
 * transaction holds the write lock throughout, so nobody can read it meanwhile, and the commit
 * stores it with the rows that use it. Written when made, a long write (10,000 rows, a new block
 * every thousand) changed the `sequences` page again after the page cache had already written it
 * to the WAL, and SQLite then recomputes the checksum of every frame after the rewritten one at
 * the commit: 20-50 ms of reads and writes on the event loop for a 32 MiB send.
 *
 * Must be used inside a write transaction (the reservation is read and written under the write
 * lock) whose start calls `began` and whose commit is preceded by `flush`.
 */
export class SequenceNumbers {
  /** The next id to hand out in this connection's block, or undefined when it holds none. */
  private next: number | undefined;
  /** The reservation this connection wrote last (the highest id it may hand out). */
  private limit = 0;
  /** False when the block must be checked against the reservation before it is used again. */
  private current = false;
  /** `limit` was reserved in this transaction and is not stored yet (see `flush`). */
  private unwritten = false;
  private readonly read: Statement;
  private readonly write: Statement;

  constructor(db: SqliteDatabase, name: SequenceName) {
    this.read = db.prepare(`SELECT reserved FROM sequences WHERE name = '${name}'`).pluck();
    this.write = db.prepare(`UPDATE sequences SET reserved = ? WHERE name = '${name}'`);
  }

  /** Takes `count` consecutive ids; returns the first. */
  take(count: number): number {
    if (!this.current) this.check();
    if (this.next === undefined || this.next + count - 1 > this.limit) this.reserve(count);
    const first = this.next!;
    this.next = first + count;
    return first;
  }

  /** True while ids of a reserved block are held in memory (see `release`). */
  get holding(): boolean {
    return this.next !== undefined;
  }

  /** What is held in memory may be stale: another connection wrote, or a write was rolled back. */
  forget(): void {
    this.current = false;
  }

  /**
   * At the start of every write transaction: a reservation still unwritten was made by a
   * transaction that did not commit, so the block was never stored and is dropped.
   */
  began(): void {
    if (!this.unwritten) return;
    this.unwritten = false;
    this.next = undefined;
  }

  /** Just before every commit: stores the reservation made in this transaction, if any. */
  flush(): void {
    if (!this.unwritten) return;
    this.write.run(this.limit);
    this.unwritten = false;
  }

  /**
   * Gives back the unused rest of the block (at a clean close, inside a write transaction), so that
   * the next opener goes on from the last id handed out. Only if the reservation is still the one
   * this connection wrote.
   */
  release(): void {
    if (!this.current) this.check();
    if (this.next === undefined) return;
    this.write.run(this.next - 1);
    this.next = undefined;
    this.unwritten = false;
  }

  /**
   * Keeps the block only if the stored reservation is still the one this connection wrote. One
   * reserved in this transaction is ours whatever is stored (a savepoint's rollback undid none of
   * it: the reservation is not written yet, and the rows kept may already use its ids).
   */
  private check(): void {
    if (this.next !== undefined && !this.unwritten && this.read.get() !== this.limit) this.next = undefined;
    this.current = true;
  }

  private reserve(count: number): void {
    // Our own block, exhausted: go on from it. Otherwise start above whatever anyone reserved.
    const first = this.next ?? (this.read.get() as number) + 1;
    this.limit = first + count - 1 + SEQUENCE_BLOCK;
    this.unwritten = true;
    this.next = first;
    this.current = true;
  }
}
