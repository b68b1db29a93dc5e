import { createRequire } from "node:module";
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import type { SyncMode } from "./sync-mode.js";

/** How long the checkpoint thread lets commits gather between two passes while writes arrive. */
export const CHECKPOINT_INTERVAL_MS = 10;
/**
 * How long it sleeps, once a pass found nothing new, before looking again unasked. A commit of
 * this process (`nudge`) wakes it at once; this catches the commits of other processes.
 */
const IDLE_MS = 5000;

// Slots of the buffer both threads share.
/** Bumped (and notified) to wake the thread: a control message, or a commit while it sleeps. */
const SIGNAL = 0;
/** 1 while the thread sleeps until woken (a nudge must wake it), 0 while it passes at intervals. */
const IDLE = 1;

/**
 * The thread's whole program (CommonJS, run with `eval`: it needs no file beside either the
 * sources or the build). It has no event loop to speak of: it sleeps on the shared signal, reads
 * its control messages synchronously, and passes over its files with a PASSIVE checkpoint each,
 * which copies what was committed and neither waits for nor blocks a writer or a reader.
 */
const PROGRAM = `
const { workerData, receiveMessageOnPort } = require("node:worker_threads");
const Database = require(workerData.driver);
const shared = new Int32Array(workerData.shared);
const port = workerData.port;
const files = new Map();

/** Applies the control messages waiting on the port: open a file, close one. */
function control() {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const { open, close, file, synchronous } = m.message;
    if (open !== undefined) {
      try {
        const db = new Database(file, { fileMustExist: true, timeout: 0 });
        db.pragma("synchronous = " + synchronous);
        // Prepared once: a pass runs it a hundred times a second.
        const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
        files.set(open, { db, checkpoint, frames: -1 });
      } catch (err) {
        port.postMessage({ failed: open, message: String((err && err.message) || err) });
      }
    } else {
      const entry = files.get(close);
      files.delete(close);
      try {
        if (entry) entry.db.close();
      } finally {
        port.postMessage({ closed: close });
      }
    }
  }
}

/** One checkpoint per file; true if any WAL changed since the last pass. */
function pass() {
  let changed = false;
  for (const entry of files.values()) {
    let frames = -1;
    try {
      // [busy, frames in the WAL, frames copied]: the WAL's length says whether anything was committed.
      frames = entry.checkpoint.get().log;
    } catch {
      // Busy or I/O: the writer's own checkpoint still runs; look again next pass.
    }
    if (frames !== entry.frames || frames < 0) changed = true;
    entry.frames = frames;
  }
  return changed;
}

// The signal is read before the messages: one sent later bumps it, and the wait below sees that.
let seen = Atomics.load(shared, ${SIGNAL});
control();
let active = true;
for (;;) {
  if (!active) {
    // About to sleep: say so, then look once more. A commit that ends before the flag is up is
    // seen by this look; one that ends after it finds the flag and wakes the thread.
    Atomics.store(shared, ${IDLE}, 1);
    active = pass();
    if (active) Atomics.store(shared, ${IDLE}, 0);
  }
  const timeout = active ? workerData.intervalMs : files.size > 0 ? workerData.idleMs : Infinity;
  const woken = Atomics.wait(shared, ${SIGNAL}, seen, timeout) !== "timed-out";
  Atomics.store(shared, ${IDLE}, 0);
  seen = Atomics.load(shared, ${SIGNAL});
  control();
  // Woken (a commit, a file came or went): let further commits gather for an interval first.
  active = woken || pass();
}
`;

/** A file the checkpoint thread keeps copied. */
export interface CheckpointedFile {
  /** A write committed: wakes the thread if it sleeps (one atomic read when it does not). */
  nudge(): void;
  /** Stops checkpointing the file; resolves once the thread's connection to it is closed. */
  close(): Promise<void>;
}

/**
 * Copies committed WAL frames into the database files of this process on a thread of its own, one
 * thread for every broker in the process, started with the first. A commit that reaches its
 * connection's autocheckpoint threshold then finds nearly every frame copied already and pays only
 * for the rest (and resets the WAL, which keeps it from growing), instead of stalling the event
 * loop for the whole copy (50 ms at 4,000 frames). SQLite allows a checkpoint from a second
 * connection while the first writes.
 *
 * The thread holds no reference on the process: an embedding that never closes still exits.
 */
class CheckpointThread {
  private readonly shared = new Int32Array(new SharedArrayBuffer(8));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private nextId = 0;
  private readonly onError = new Map<number, (err: Error) => void>();
  private readonly closing = new Map<number, () => void>();
  /** Set once the thread has died: the next file starts another. */
  dead = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(PROGRAM, {
      eval: true,
      // Plain JavaScript: none of the parent's loaders (a TypeScript loader costs tens of ms at start).
      execArgv: [],
      workerData: {
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        shared: this.shared.buffer,
        port: port2,
        intervalMs: CHECKPOINT_INTERVAL_MS,
        idleMs: IDLE_MS,
      },
      transferList: [port2],
      // Only the checkpoint loop runs there: a small heap is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    this.port.on("message", (m: { failed?: number; closed?: number; message?: string }) => {
      if (m.failed !== undefined) this.onError.get(m.failed)?.(new Error(m.message));
      if (m.closed !== undefined) this.closed(m.closed);
    });
    // A thread that dies leaves checkpoints to each writer's own: say so, and let a later file retry.
    this.worker.on("error", (err) => this.die(err));
    this.worker.on("exit", () => this.die(new Error("the checkpoint thread exited")));
    this.worker.unref();
    this.port.unref();
  }

  add(file: string, synchronous: SyncMode, onError: (err: Error) => void): CheckpointedFile {
    const id = this.nextId++;
    this.onError.set(id, onError);
    this.send({ open: id, file, synchronous: synchronous.toUpperCase() });
    let closing: Promise<void> | undefined;
    return {
      nudge: () => {
        if (Atomics.load(this.shared, IDLE) === 1) this.wake();
      },
      close: () => {
        closing ??= new Promise<void>((resolve) => {
          this.onError.delete(id);
          if (this.dead) return resolve();
          this.closing.set(id, resolve);
          // Held open until the thread answers, or an otherwise idle process exits first.
          this.port.ref();
          this.send({ close: id });
        });
        return closing;
      },
    };
  }

  private send(message: object): void {
    this.port.postMessage(message);
    this.wake();
  }

  private wake(): void {
    Atomics.store(this.shared, IDLE, 0);
    Atomics.add(this.shared, SIGNAL, 1);
    Atomics.notify(this.shared, SIGNAL);
  }

  private closed(id: number): void {
    this.closing.get(id)?.();
    this.closing.delete(id);
    if (this.closing.size === 0) this.port.unref();
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    for (const report of this.onError.values()) report(err);
    for (const id of [...this.closing.keys()]) this.closed(id);
    this.port.close();
  }
}

let thread: CheckpointThread | undefined;

/**
 * Hands a WAL database file to the process's checkpoint thread (starting it if needed). Not for
 * in-memory or exclusively locked files: no second connection can open them.
 */
export function checkpointInBackground(
  file: string,
  synchronous: SyncMode,
  onError: (err: Error) => void,
): CheckpointedFile {
  if (!thread || thread.dead) thread = new CheckpointThread();
  return thread.add(file, synchronous, onError);
}
