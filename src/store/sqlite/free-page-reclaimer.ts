import type { SqliteDatabase } from "./database.js";

/** Free pages below which a pass leaves them to be reused by the next writes. */
export const RECLAIM_MIN_FREE_PAGES = 256;

/**
 * Pages one step gives back (about 1 MiB, 0.5–2 ms of work). A single `incremental_vacuum` over
 * 20,000 free pages held the event loop for over 200 ms; in steps the loop turns between them.
 */
export const RECLAIM_STEP_PAGES = 256;

/**
 * Gives the file's free pages back to the file system, a step at a time (incremental auto-vacuum:
 * the file's last pages move into the free ones and the file ends shorter).
 *
 * Free pages are not only disk: a long write that lands on them changes the auto-vacuum pointer-map
 * pages that track them, after the page cache spilled those pages to the WAL, and SQLite then
 * rewrites those frames in place and checksums every later frame again at the commit.
 *
 * Each step is its own short transaction on the writer's connection, taken only between the
 * writer's transactions (`canStep`): a write waits behind one step at most. A long write holding
 * the transaction open, a closed connection or another connection holding the write lock (a step
 * does not wait for it) ends the pass; the next one resumes. The file itself shrinks when a
 * checkpoint has copied the steps' pages (`afterPass` wakes the checkpoint thread).
 */
export class FreePageReclaimer {
  private pass: Promise<void> | undefined;

  constructor(
    private readonly db: SqliteDatabase,
    /** False while the writer holds a transaction open across turns (a long write). */
    private readonly canStep: () => boolean,
    private readonly afterPass: () => void = () => {},
  ) {}

  /** Starts a pass unless one runs; resolves when it ends. Never rejects. */
  reclaim(): Promise<void> {
    this.pass ??= this.run().finally(() => {
      this.pass = undefined;
    });
    return this.pass;
  }

  private async run(): Promise<void> {
    let stepped = false;
    try {
      while (this.ready() && this.freePages() >= (stepped ? 1 : RECLAIM_MIN_FREE_PAGES)) {
        this.step();
        stepped = true;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch {
      // Busy (another process writes) or closing: the next pass resumes.
    }
    if (stepped && this.db.open) this.afterPass();
  }

  /**
   * One step, without waiting for the lock: with another process writing, the connection's busy
   * timeout (seconds) would hold the event loop for work that can wait for the next pass.
   */
  private step(): void {
    const timeout = this.db.pragma("busy_timeout", { simple: true }) as number;
    this.db.pragma("busy_timeout = 0");
    try {
      this.db.pragma(`incremental_vacuum(${RECLAIM_STEP_PAGES})`);
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`);
    }
  }

  private ready(): boolean {
    return this.db.open && !this.db.inTransaction && this.canStep();
  }

  private freePages(): number {
    return this.db.pragma("freelist_count", { simple: true }) as number;
  }
}
