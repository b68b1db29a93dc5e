import { CancelledError, ClosedError, DbLockedError, StorageFullError } from "../../contract/errors.js";
import type { WriteContext } from "../../core/write-context.js";
import type { SqliteDatabase } from "./database.js";
import { mapSqliteError } from "./sqlite-errors.js";

/** The hooks one transaction (or one write of it) collects: it is the writes' context itself. */
class Hooks implements WriteContext {
  readonly after: (() => void)[] = [];
  readonly before: ((ctx: WriteContext) => void)[] = [];
  readonly rolledBack: (() => void)[] = [];

  afterCommit(fn: () => void): void {
    this.after.push(fn);
  }

  beforeCommit(fn: (ctx: WriteContext) => void): void {
    this.before.push(fn);
  }

  afterRollback(fn: () => void): void {
    this.rolledBack.push(fn);
  }

  /** Keeps the hooks of a write that succeeded. */
  adopt(other: Hooks): void {
    this.after.push(...other.after);
    this.before.push(...other.before);
    this.rolledBack.push(...other.rolledBack);
  }
}

/** Calls each function; one that throws does not stop the others (they are notifications). */
function runAll(fns: readonly (() => void)[]): void {
  for (const f of fns) {
    try {
      f();
    } catch {
      // a notification failing must not fail the writes
    }
  }
}

interface PendingWrite {
  fn: (ctx: WriteContext) => unknown;
  /** A long write's steps (see `runSliced`); `fn` is unused then. */
  steps?: (ctx: WriteContext) => Iterator<void, unknown, undefined>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  replayable: boolean;
}

/** One write's outcome within a group. */
interface Outcome {
  ok: boolean;
  value: unknown;
}

/**
 * Schedules `fn` as a microtask. A resolved promise's job, not `queueMicrotask`: Node wraps each
 * `queueMicrotask` callback in an async resource, which costs three times as much, and the window
 * after every commit takes several hops.
 */
const RESOLVED = Promise.resolve();
const microtask = (fn: () => void): void => {
  RESOLVED.then(fn);
};

/** Microtask hops after a commit during which a new write counts as its caller's continuation. */
const WINDOW_HOPS = 8;
/** Most commits in a row made from continuations before the writer yields to the event loop. */
const MAX_CHAINED = 8;
/**
 * Most extra turns of the event loop a group from I/O waits for while each turn brings it more
 * writes. A turn that brings none commits at once, so a lone caller pays one turn (microseconds);
 * a busy HTTP server commits all its connections' requests together (16 per commit rather than ~10
 * with 16 connections), a tenth less CPU per request.
 */
const MAX_GATHER_TURNS = 4;
/**
 * A writer that has made no write and committed none for this long is idle: the next write is a
 * lone one, with nothing coming in to gather, and commits at the end of its task's microtasks
 * rather than a turn later (a tenth of an idle worker's enqueue→handler time). Under load (a served
 * broker's connections, concurrent or sequential callers, a draining worker) writes and commits
 * follow each other within tens of microseconds, and gather as below.
 */
const IDLE_MS = 0.5;
/** Groups run with a savepoint per write after one of them had a write fail. */
const CAREFUL_AFTER_FAILURE = 16;
/** How long a long write runs before it lets the event loop turn (its transaction still open). */
const SLICE_MS = 4;
/**
 * How long after a long write's commit the commits leave checkpoints to the checkpoint thread
 * alone: its frames (thousands) are copied there meanwhile, instead of by the next commit on the
 * event loop (100 ms and more for a 32 MiB write).
 */
const CHECKPOINT_HOLD_MS = 2000;

/**
 * The page cache a long write runs with (`PRAGMA cache_size`, KiB when negative). Its changed pages
 * are written to the WAL as the cache fills, a page at a time within its slices, and its commit
 * writes what is left: at most this much. With the connection's own cache (16 MiB), the commit of a
 * 32 MiB send wrote 16 MiB at once and held the event loop for 60-100 ms; with 4 MB, 30-50 ms.
 */
const LONG_WRITE_CACHE_KIB = -2000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Group commit: writes that arrive together (in one turn of the event loop, e.g. from many HTTP
 * requests or many concurrent callers) run in one `BEGIN IMMEDIATE` transaction and share one
 * commit (one fsync under `synchronous=full`). Each caller still gets its own result or its own
 * error, and a failed write leaves nothing behind.
 *
 * A write is undone alone by running it in a savepoint, which costs a third of a small write. So a
 * group of replayable writes (functions of the database alone, whose other effects go through their
 * hooks) runs without savepoints; if one throws, the whole transaction is rolled back and the group
 * runs again with a savepoint per write, as do the next few groups. A group holding a write that is
 * not replayable always runs with savepoints.
 */
export class Writer {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  /**
   * Microtask hops left in the window that follows a commit. A write made in that window is the
   * continuation of a caller the commit just answered (a sequential caller's next write): no other
   * I/O can join it before the event loop turns, so it commits at the end of the microtasks instead
   * of paying a `setImmediate` hop. Writes from I/O callbacks (HTTP requests parsed in one poll
   * phase) come after the window has closed and still share one commit; while each further turn
   * of the loop brings the group more of them (the requests of other connections, trickling in as
   * a busy server answers), it waits for the next turn, up to `MAX_GATHER_TURNS`.
   */
  private window = 0;
  /** When the last write was made or the last group committed (`performance.now()`; see `IDLE_MS`). */
  private lastActive = 0;
  /** How long without writes or commits makes the writer idle (`IDLE_MS`; a test may set it). */
  idleMs = IDLE_MS;
  /** Commits in a row without yielding to the event loop; bounded so that I/O is never starved. */
  private chained = 0;
  private closed = false;
  private inFlight = 0;
  private readonly flushNow = () => this.flush();
  /** Writes pending when the group last looked for more, and the turns it has waited. */
  private gathered = 0;
  private gatherTurns = 0;
  /** Writes of the last group committed. */
  private lastGroup = 0;
  private readonly flushGathered = () => {
    const n = this.pending.length;
    if (n > this.gathered && this.gatherTurns < MAX_GATHER_TURNS) {
      this.gathered = n;
      this.gatherTurns++;
      setImmediate(this.flushGathered);
      return;
    }
    this.gathered = 0;
    this.gatherTurns = 0;
    this.flush();
  };
  private readonly hop = () => {
    if (--this.window > 0) microtask(this.hop);
  };
  private idle: (() => void)[] = [];
  /** Groups left to run with a savepoint per write (see `CAREFUL_AFTER_FAILURE`). */
  private careful = 0;

  /**
   * The sliced reads waiting for a slice, in line (see `readSliced`): each runs its statements
   * until the given time and says whether it has finished.
   */
  private readonly reads: ((until: number) => boolean)[] = [];
  private readsScheduled = false;

  /** Set while a long write runs (see `runSliced`): resolves once it has committed or rolled back. */
  private slicing: Promise<void> | undefined;
  /** Restores the commits' own checkpoints after a long write (see `CHECKPOINT_HOLD_MS`). */
  private checkpointHold: NodeJS.Timeout | undefined;

  private readonly sql: Record<
    "begin" | "commit" | "rollback" | "savepoint" | "release" | "rollbackTo",
    { run(): unknown }
  >;

  constructor(
    private readonly db: SqliteDatabase,
    /** Called at the start of every transaction, under the write lock (cache checks). */
    private readonly onBegin: () => void = () => {},
    /** Called after anything was rolled back: what was cached from the undone writes is stale. */
    private readonly onRollback: () => void = () => {},
    /**
     * Called last before every COMMIT, after the hooks, under the write lock (the writes held back
     * to the end of the transaction: the sequence reservations). Throwing fails the transaction.
     */
    private readonly beforeCommit: () => void = () => {},
    /** Called after every commit, before its hooks (the checkpoint thread's wake-up). */
    private readonly onCommit: () => void = () => {},
    /**
     * Whether a checkpoint thread copies this file's commits: a long write's commit then leaves
     * the copy to it; with its WAL autocheckpoint threshold (`autocheckpointFrames`) otherwise.
     */
    private readonly checkpointsInBackground: () => boolean = () => false,
    private readonly autocheckpointFrames = 0,
  ) {
    this.sql = {
      begin: db.prepare("BEGIN IMMEDIATE"),
      commit: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
      savepoint: db.prepare("SAVEPOINT w"),
      release: db.prepare("RELEASE w"),
      rollbackTo: db.prepare("ROLLBACK TO w"),
    };
  }

  /**
   * Queues a write for the next group commit. `replayable`: `fn` reads and writes the database and
   * acts otherwise only through its hooks, so it may run again after being rolled back.
   */
  run<T>(fn: (ctx: WriteContext) => T, signal?: AbortSignal, replayable = false): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (signal?.aborted) return Promise.reject(new CancelledError());
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject, signal, replayable });
      this.inFlight++;
      const now = performance.now();
      const idle = now - this.lastActive >= this.idleMs;
      this.lastActive = now;
      if (!this.scheduled && !this.slicing) {
        this.scheduled = true;
        if (idle) {
          // A lone write: it commits once its task's microtasks have run (with any write they
          // make) rather than a turn later. Writes from the rest of this turn's callbacks gather
          // behind it as usual.
          this.chained = 1;
          microtask(this.flushNow);
        } else if (this.window > 0 && this.chained < MAX_CHAINED) {
          this.chained++;
          microtask(this.flushNow);
        } else {
          // A write made before the turn it waits for (after a chain of continuations, the yield's
          // turn lets I/O in), or after a group of one (a lone caller): the group waits a further
          // turn only if that one brought more writes, so a lone write commits after one turn.
          // Behind a group of several (connections answered together, whose next requests trickle
          // in over the next turns) the first turn's writes wait for a second turn anyway.
          this.gathered = this.window > 0 || this.lastGroup <= 1 ? this.pending.length : 0;
          this.chained = 0;
          setImmediate(this.flushGathered);
        }
      }
    });
  }

  /**
   * Queues a long write (a batch of thousands of items), run alone in its own transaction: `steps`
   * yields between its statements, and where it has run for `SLICE_MS` the event loop turns before
   * the next, with the transaction open. Other writes queue behind it meanwhile, and the broker's
   * reads wait for `settled()` (on this connection they would see its uncommitted rows). Held for
   * one transaction in one piece, a 10,000-message send of 32 MiB kept every other request of a
   * server waiting for a quarter of a second.
   */
  runSliced<T>(steps: (ctx: WriteContext) => Iterator<void, T, undefined>, signal?: AbortSignal): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    if (signal?.aborted) return Promise.reject(new CancelledError());
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        fn: () => undefined,
        steps,
        resolve: resolve as (v: unknown) => void,
        reject,
        signal,
        replayable: false,
      });
      this.inFlight++;
      this.schedule();
    });
  }

  /**
   * Runs a sliced read (`ReadOptions.sliced`) on this connection between writes: `steps` runs its
   * statements one by one (`beforeSlice` runs before each run of them: the broker's check for
   * other processes' commits). The sliced reads share the turns of the event loop: each turn runs
   * at most `SLICE_MS` of their statements, the reads taking slices in turn (one that has more to
   * read goes to the back of the line). Each read ran a slice of its own every turn before, so
   * seven Peeks at once each read, encoded and wrote their answer in one turn, holding the server
   * for 60 ms. Writes run between turns; no statement of a read runs while a long write holds the
   * transaction open (it would see uncommitted rows), nor once the writer has closed.
   */
  readSliced<T>(steps: Iterator<void, T, undefined>, beforeSlice: () => void): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError());
    return new Promise<T>((resolve, reject) => {
      this.reads.push((until) => {
        if (this.closed) {
          reject(new ClosedError());
          return true;
        }
        try {
          beforeSlice();
          let next: IteratorResult<void, T>;
          do next = steps.next();
          while (!next.done && performance.now() < until);
          if (!next.done) return false;
          resolve(next.value);
        } catch (err) {
          // A read meets a corrupt page or a lock like a write does: the caller gets the named error.
          reject(mapSqliteError(err));
        }
        return true;
      });
      this.scheduleReads();
    });
  }

  /** Runs the reads' slices of one turn at the next turn, unless it is scheduled already. */
  private scheduleReads(): void {
    if (this.readsScheduled || this.reads.length === 0) return;
    this.readsScheduled = true;
    setImmediate(this.runReads);
  }

  private readonly runReads = () => {
    this.readsScheduled = false;
    if (this.slicing) {
      // A long write holds the transaction open: the reads go on after its commit or rollback.
      void this.slicing.then(() => this.scheduleReads());
      return;
    }
    const until = performance.now() + SLICE_MS;
    do {
      const slice = this.reads.shift()!;
      if (!slice(until)) this.reads.push(slice);
    } while (this.reads.length > 0 && performance.now() < until);
    this.scheduleReads();
  };

  /** Whether a long write holds the transaction open across turns of the event loop. */
  get busy(): boolean {
    return this.slicing !== undefined;
  }

  /** Resolves once no long write holds the transaction open (at once when none does). */
  settled(): Promise<void> {
    return this.slicing ?? RESOLVED;
  }

  /** Schedules the next group unless one is scheduled (or a long write runs: it schedules after). */
  private schedule(): void {
    if (this.scheduled || this.slicing) return;
    this.scheduled = true;
    this.gathered = 0;
    this.chained = 0;
    setImmediate(this.flushGathered);
  }

  /** Runs one write synchronously in its own transaction (start-up and maintenance paths). */
  runNow<T>(fn: (ctx: WriteContext) => T): T {
    const hooks = new Hooks();
    this.sql.begin.run();
    let result: T;
    try {
      this.onBegin();
      result = fn(hooks);
      this.runBeforeCommit(hooks);
      this.sql.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.sql.rollback.run();
      runAll(hooks.rolledBack);
      this.onRollback();
      throw mapSqliteError(err);
    }
    this.onCommit();
    for (const f of hooks.after) f();
    return result;
  }

  /**
   * Why the last transaction could not commit, when it was the store (a full disk or database, a
   * lock another connection holds) rather than the write; cleared by the next commit. Readiness
   * reports it.
   */
  storeFailure: StorageFullError | DbLockedError | undefined;

  private noteFailure(err: unknown): void {
    if (err instanceof StorageFullError || err instanceof DbLockedError) this.storeFailure = err;
  }

  /** Stops admitting writes; resolves once every admitted write has settled. */
  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.checkpointHold);
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private flush(): void {
    this.scheduled = false;
    if (this.slicing) return;
    let batch = this.pending.filter((w) => {
      if (!w.signal?.aborted) return true;
      this.settle(w, undefined, new CancelledError());
      return false;
    });
    this.pending = [];
    // A long write runs alone: the writes queued before it commit first, those after it wait.
    const long = batch.findIndex((w) => w.steps !== undefined);
    if (long === 0) {
      this.pending = batch.slice(1);
      let ended!: () => void;
      this.slicing = new Promise((resolve) => {
        ended = resolve;
      });
      // Set before it runs: one too short to turn the loop ends (and clears it) synchronously.
      void this.runLong(batch[0]!, ended);
      return;
    }
    if (long > 0) {
      this.pending = batch.slice(long);
      batch = batch.slice(0, long);
      this.schedule();
    }
    if (batch.length === 0) return;
    this.lastGroup = batch.length;

    let hooks = new Hooks();
    let results: Outcome[] = [];
    try {
      this.sql.begin.run();
    } catch (err) {
      const mapped = mapSqliteError(err);
      this.noteFailure(mapped);
      for (const w of batch) this.settle(w, undefined, mapped);
      return;
    }
    try {
      this.onBegin();
      if (batch.length === 1) {
        results.push({ ok: true, value: batch[0]!.fn(hooks) });
      } else if (this.careful > 0 || !batch.every((w) => w.replayable)) {
        if (this.careful > 0) this.careful--;
        results = this.runEach(batch, hooks);
      } else {
        const optimistic = this.runOptimistically(batch);
        if (optimistic) {
          hooks = optimistic.hooks;
          results = optimistic.results;
        } else {
          this.careful = CAREFUL_AFTER_FAILURE;
          results = this.runEach(batch, hooks);
        }
      }
      this.runBeforeCommit(hooks);
      this.sql.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.sql.rollback.run();
      runAll(hooks.rolledBack);
      this.onRollback();
      const mapped = mapSqliteError(err);
      this.noteFailure(mapped);
      // A single write's own failure, or a failed commit: nothing of the batch is stored.
      batch.forEach((w, i) => {
        const r = results[i];
        this.settle(w, undefined, r && !r.ok ? mapSqliteError(r.value) : mapped);
      });
      return;
    }
    this.onCommit();
    this.storeFailure = undefined;
    runAll(hooks.after);
    batch.forEach((w, i) => {
      const r = results[i]!;
      if (r.ok) this.settle(w, r.value, undefined);
      else this.settle(w, undefined, mapSqliteError(r.value));
    });
    this.openWindow();
    this.lastActive = performance.now();
  }

  /** Runs a long write (see `runSliced`) in its own transaction, letting the loop turn between slices. */
  private async runLong(w: PendingWrite, ended: () => void): Promise<void> {
    // Before its caller hears of it: a read made then must not wait for this write.
    const end = (value: unknown, err: unknown) => {
      this.slicing = undefined;
      this.lastActive = performance.now();
      ended();
      if (this.pending.length > 0) this.schedule();
      this.settle(w, value, err);
    };
    const hooks = new Hooks();
    try {
      this.sql.begin.run();
    } catch (err) {
      const mapped = mapSqliteError(err);
      this.noteFailure(mapped);
      end(undefined, mapped);
      return;
    }
    let value: unknown;
    const cacheSize = this.db.pragma("cache_size", { simple: true }) as number;
    this.db.pragma(`cache_size = ${LONG_WRITE_CACHE_KIB}`);
    try {
      this.onBegin();
      const steps = w.steps!(hooks);
      let slice = performance.now();
      for (let next = steps.next(); ; next = steps.next()) {
        if (next.done) {
          value = next.value;
          break;
        }
        if (performance.now() - slice > SLICE_MS) {
          await nextTurn();
          slice = performance.now();
        }
      }
      this.runBeforeCommit(hooks);
      this.holdCheckpoints();
      this.sql.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.sql.rollback.run();
      this.db.pragma(`cache_size = ${cacheSize}`);
      runAll(hooks.rolledBack);
      this.onRollback();
      const mapped = mapSqliteError(err);
      this.noteFailure(mapped);
      end(undefined, mapped);
      return;
    }
    this.db.pragma(`cache_size = ${cacheSize}`);
    this.onCommit();
    this.storeFailure = undefined;
    runAll(hooks.after);
    end(value, undefined);
  }

  /**
   * Turns the connection's autocheckpoint off for a while when a checkpoint thread copies the
   * file (see `CHECKPOINT_HOLD_MS`): the commit about to be made adds thousands of frames to the
   * WAL, which the autocheckpoint would copy at once, on the event loop.
   */
  private holdCheckpoints(): void {
    if (this.autocheckpointFrames <= 0 || !this.checkpointsInBackground()) return;
    this.db.pragma("wal_autocheckpoint = 0");
    clearTimeout(this.checkpointHold);
    this.checkpointHold = setTimeout(() => {
      this.checkpointHold = undefined;
      if (!this.closed) this.db.pragma(`wal_autocheckpoint = ${this.autocheckpointFrames}`);
    }, CHECKPOINT_HOLD_MS);
    this.checkpointHold.unref();
  }

  /**
   * Runs a group of replayable writes without savepoints. If one throws, rolls back what they did
   * and starts the transaction again, empty, answering undefined: the caller runs them one by one.
   */
  private runOptimistically(
    batch: readonly PendingWrite[],
  ): { hooks: Hooks; results: Outcome[] } | undefined {
    const hooks = new Hooks();
    const results: Outcome[] = [];
    try {
      for (const w of batch) results.push({ ok: true, value: w.fn(hooks) });
      return { hooks, results };
    } catch {
      this.sql.rollback.run();
      runAll(hooks.rolledBack);
      this.onRollback();
      this.sql.begin.run();
      this.onBegin();
      return undefined;
    }
  }

  /** Runs each write of a group in its own savepoint: one that throws is undone alone. */
  private runEach(batch: readonly PendingWrite[], hooks: Hooks): Outcome[] {
    const results: Outcome[] = [];
    for (const w of batch) {
      const mine = new Hooks();
      this.sql.savepoint.run();
      try {
        const value = w.fn(mine);
        this.sql.release.run();
        results.push({ ok: true, value });
        hooks.adopt(mine);
      } catch (err) {
        this.sql.rollbackTo.run();
        this.sql.release.run();
        results.push({ ok: false, value: err });
        runAll(mine.rolledBack);
        this.onRollback();
      }
    }
    return results;
  }

  /** Runs the before-commit hooks (they may add more), each in its own savepoint. */
  private runBeforeCommit(hooks: Hooks): void {
    for (let i = 0; i < hooks.before.length; i++) {
      const mine = new Hooks();
      this.sql.savepoint.run();
      try {
        hooks.before[i]!(mine);
        this.sql.release.run();
        hooks.adopt(mine);
      } catch {
        // A hook is an optimisation (a hand-off): undone with what it promised, the writes commit.
        this.sql.rollbackTo.run();
        this.sql.release.run();
        runAll(mine.rolledBack);
        this.onRollback();
      }
    }
    this.beforeCommit();
  }

  /**
   * Opens the window after a commit for `WINDOW_HOPS` microtask hops (see `window`). A window still
   * open (a commit made from a continuation) is only refilled: one chain of hops at a time.
   */
  private openWindow(): void {
    const running = this.window > 0;
    this.window = WINDOW_HOPS;
    if (!running) microtask(this.hop);
  }

  private settle(w: PendingWrite, value: unknown, err: unknown): void {
    if (err !== undefined) w.reject(err);
    else w.resolve(value);
    this.inFlight--;
    if (this.inFlight === 0 && this.idle.length > 0) {
      for (const f of this.idle.splice(0)) f();
    }
  }
}
