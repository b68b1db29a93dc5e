import { currentJob } from "../context.js";
import type { QueueCore } from "../core.js";
import { QueueError } from "../errors.js";
import { serializeCall } from "../serializer.js";
import type { TaskHandler } from "../types.js";
import { SandboxProcess } from "./sandbox-process.js";
import { type SandboxedHandler, sandboxTarget } from "./target.js";

/** An idle sandbox process is ended after this long without a job. */
export const SANDBOX_IDLE_MS = 60_000;

/**
 * The sandbox processes of one queue. A job takes an idle process or starts one (so there are as
 * many as the queue's sandboxed jobs running at once, bounded by its workers' concurrency); a
 * process that finished its job cleanly waits for the next one, one that crashed, timed out or was
 * cancelled is gone and is not reused. Idle processes do not keep the worker's process alive.
 */
export class SandboxPool {
  private readonly idle: { sandbox: SandboxProcess; timer: NodeJS.Timeout }[] = [];
  private readonly all = new Set<SandboxProcess>();
  private closed = false;

  constructor(private readonly idleMs = SANDBOX_IDLE_MS) {}

  /** Processes alive now (busy or idle). */
  get size(): number {
    return this.all.size;
  }

  /** A usable sandbox: the most recently parked idle one, else a new process. */
  acquire(): SandboxProcess {
    if (this.closed) throw new QueueError("the queue is closed");
    while (this.idle.length > 0) {
      const { sandbox, timer } = this.idle.pop()!;
      clearTimeout(timer);
      if (sandbox.usable) return sandbox;
      this.all.delete(sandbox);
    }
    const sandbox = new SandboxProcess();
    this.all.add(sandbox);
    void sandbox.exited.then(() => this.all.delete(sandbox));
    return sandbox;
  }

  /** Parks a sandbox after its job, or lets it go when it cannot serve another. */
  release(sandbox: SandboxProcess): void {
    if (this.closed || !sandbox.usable) {
      sandbox.kill();
      return;
    }
    const timer = setTimeout(() => {
      const at = this.idle.findIndex((e) => e.sandbox === sandbox);
      if (at >= 0) this.idle.splice(at, 1);
      sandbox.kill();
    }, this.idleMs);
    timer.unref();
    this.idle.push({ sandbox, timer });
  }

  /** Kills every process (running jobs fail) and waits until they are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.idle.splice(0)) clearTimeout(timer);
    const all = [...this.all];
    for (const sandbox of all) sandbox.kill();
    await Promise.all(all.map((s) => s.exited));
  }
}

const pools = new WeakMap<QueueCore, SandboxPool>();

function poolOf(core: QueueCore): SandboxPool {
  let pool = pools.get(core);
  if (!pool) {
    pool = new SandboxPool();
    pools.set(core, pool);
  }
  return pool;
}

/**
 * The handler a sandboxed task registers: it sends the job's arguments, serialized with the queue's
 * serializer, to a sandbox process, and resolves with its result. The job's signal (timeout,
 * cancellation) kills the process.
 */
export function sandboxedTaskHandler(core: QueueCore, taskName: string, spec: SandboxedHandler): TaskHandler {
  const target = sandboxTarget(taskName, spec, core.serializer);
  return async (...args: unknown[]) => {
    const ctx = currentJob();
    const { signal } = ctx;
    signal.throwIfAborted();
    const body = serializeCall(core.serializer, args);
    const pool = poolOf(core);
    const sandbox = pool.acquire();
    try {
      const bytes = await sandbox.run(
        {
          href: target.href,
          exportName: target.exportName,
          serializer: target.serializer,
          body,
          job: { jobId: ctx.jobId, taskName: ctx.taskName, queue: ctx.queue, attempt: ctx.attempt },
        },
        ctx,
        core.serializer,
        signal,
      );
      return core.serializer.deserialize(bytes);
    } finally {
      pool.release(sandbox);
    }
  };
}

/** Ends the queue's sandbox processes (at `queue.close()`). */
export async function closeSandboxes(core: QueueCore): Promise<void> {
  await pools.get(core)?.close();
}
