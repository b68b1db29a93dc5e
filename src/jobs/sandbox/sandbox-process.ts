import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { JobContext } from "../context.js";
import { QueueError } from "../errors.js";
import type { Serializer } from "../serializer.js";
import { SandboxCrashedError } from "./errors.js";
import {
  type CallMessage,
  FORWARDED_CALLS,
  type FromSandbox,
  fromWireError,
  type RunMessage,
  type ToSandbox,
  toWireError,
  type WireError,
} from "./protocol.js";

/**
 * The sandbox's entry module, next to this one: `.ts` when this module runs from source (under a
 * loader the sandbox inherits through the node flags), `.js` once built.
 */
const ENTRY = fileURLToPath(
  new URL(`./sandbox-main${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url),
);

/**
 * The worker's node flags, less those that make no sense twice: a debugger port (it would clash),
 * the test runner's flags, and code given on the command line.
 */
function sandboxExecArgv(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (/^--(inspect|debug)/.test(a) || a.startsWith("--test")) continue;
    if (a === "-e" || a === "--eval" || a === "-p" || a === "--print") {
      i++;
      continue;
    }
    if (/^--(eval|print)=/.test(a)) continue;
    out.push(a);
  }
  return out;
}

const STALE_CALL = "currentJob() was called after its handler returned: the job is over";

/** Every sandbox process alive in this process. */
const live = new Set<ChildProcess>();

/**
 * When the worker's process exits (normally or through an uncaught error), its sandboxes go with
 * it: an idle one would notice on its own, a busy one may be stuck in a loop and never would.
 */
function killAllAtExit(): void {
  for (const child of live) child.kill("SIGKILL");
}

/** The job a sandbox runs now. */
interface Running {
  runId: number;
  ctx: JobContext;
  serializer: Serializer;
  settle(outcome: { ok: true; value: Uint8Array } | { ok: false; error: unknown }): void;
}

/**
 * One sandbox: a child process that runs one job at a time and may serve many jobs in turn.
 *
 * A child process rather than a worker thread: the handler then shares nothing with the worker
 * (heap, event loop, native state), so an infinite loop, `process.exit`, a native abort or an
 * out-of-memory end only the sandbox, which is killed and replaced, while the worker goes on.
 */
export class SandboxProcess {
  private readonly child: ChildProcess;
  private running: Running | undefined;
  private fatal: WireError | undefined;
  private runs = 0;
  private alive = true;
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>;

  constructor() {
    this.child = fork(ENTRY, [], {
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: sandboxExecArgv(),
    });
    if (!process.listeners("exit").includes(killAllAtExit)) process.on("exit", killAllAtExit);
    live.add(this.child);
    this.exited = new Promise<void>((resolve) => {
      // "close" rather than "exit": it comes after the last message (a crash's report) was read.
      this.child.once("close", (code, signal) => {
        live.delete(this.child);
        this.gone(
          new SandboxCrashedError(code, signal, this.fatal && `${this.fatal.name}: ${this.fatal.message}`),
        );
        resolve();
      });
      // A process that could not start (or be signalled) ends here, without an "exit".
      this.child.on("error", (err) => {
        const first = this.alive;
        this.gone(err);
        if (this.child.pid === undefined) {
          live.delete(this.child);
          resolve();
        } else if (first) this.kill();
      });
    });
    this.child.on("message", (m: FromSandbox) => this.onMessage(m));
  }

  /** The process id (undefined when it could not start). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True while the process may take a job. */
  get usable(): boolean {
    return this.alive && this.running === undefined;
  }

  /** Whether the process keeps the worker's process alive: only while it runs a job. */
  hold(held: boolean): void {
    if (held) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }

  /**
   * Runs one job and resolves with its serialized result. Rejects with the handler's error, with a
   * `SandboxCrashedError` when the process dies, or with the signal's reason once `signal` aborts
   * (timeout or cancellation), which kills the process.
   */
  run(
    message: Omit<RunMessage, "type" | "runId">,
    ctx: JobContext,
    serializer: Serializer,
    signal: AbortSignal,
  ): Promise<Uint8Array> {
    return new Promise<Uint8Array>((resolve, reject) => {
      const onAbort = () => {
        this.kill();
        running.settle({ ok: false, error: signal.reason });
      };
      const running: Running = {
        runId: ++this.runs,
        ctx,
        serializer,
        settle: (outcome) => {
          if (this.running !== running) return;
          this.running = undefined;
          signal.removeEventListener("abort", onAbort);
          // A live process waits unheld for its next job; a dying one stays held until it is gone.
          if (this.alive) this.hold(false);
          if (outcome.ok) resolve(outcome.value);
          else reject(outcome.error);
        },
      };
      if (!this.alive) {
        reject(new SandboxCrashedError(this.child.exitCode, this.child.signalCode));
        return;
      }
      this.running = running;
      this.hold(true);
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.send({ type: "run", runId: running.runId, ...message });
    });
  }

  /** Ends the process at once (SIGKILL: a busy loop never reads a gentler signal). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      // Held until it is gone, so that whoever awaits `exited` sees it.
      this.hold(true);
      this.child.kill("SIGKILL");
    }
    this.alive = false;
  }

  private gone(error: unknown): void {
    this.alive = false;
    this.running?.settle({ ok: false, error });
  }

  private send(message: ToSandbox): void {
    if (!this.alive || !this.child.connected) return;
    // A send that fails means the process is dying: its "exit" settles the job.
    this.child.send(message, (err) => {
      if (err) this.kill();
    });
  }

  private onMessage(m: FromSandbox): void {
    if (m.type === "fatal") {
      this.fatal = m.error;
      return;
    }
    const running = this.running;
    if (m.type === "call" && running?.runId !== m.runId) {
      // Made after its handler returned (from a timer, say): its job is over.
      this.send({ type: "reply", id: m.id, ok: false, error: toWireError(new QueueError(STALE_CALL)) });
      return;
    }
    if (!running) return;
    if (m.type === "done") {
      if (m.ok) running.settle({ ok: true, value: m.value ?? new Uint8Array(0) });
      else
        running.settle({ ok: false, error: fromWireError(m.error ?? { name: "Error", message: "failed" }) });
      return;
    }
    if (m.type === "call") void this.forward(running, m);
  }

  /** Runs a sandbox's `currentJob()` call against the job and sends back its outcome. */
  private async forward(running: Running, m: CallMessage): Promise<void> {
    try {
      if (!FORWARDED_CALLS.includes(m.method)) throw new Error(`unknown call ${String(m.method)}`);
      const fn = running.ctx[m.method] as (...args: unknown[]) => Promise<unknown>;
      const value = await fn.apply(running.ctx, m.args);
      const reply: ToSandbox = { type: "reply", id: m.id, ok: true };
      if (value !== undefined) reply.value = running.serializer.serialize(value);
      this.send(reply);
    } catch (err) {
      this.send({ type: "reply", id: m.id, ok: false, error: toWireError(err) });
    }
  }
}
