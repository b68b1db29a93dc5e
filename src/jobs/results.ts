import type { QueueCore } from "./core.js";
import { JobCancelledError, JobFailedError, JobNotFoundError, ResultTimeoutError } from "./errors.js";
import { seqOf } from "./job-record.js";

/** The longest single wait on the broker (its long-poll cap). */
const MAX_WAIT_SLICE_MS = 20_000;

/**
 * Waits for a job's outcome: woken by the broker when the job settles (event-driven in-process;
 * across processes the broker notices other connections' commits, and a remote broker long-polls).
 */
export async function waitForResult(core: QueueCore, id: string, timeoutMs = 30_000): Promise<unknown> {
  const seq = seqOf(id);
  if (seq === undefined) throw new JobNotFoundError(id);
  const broker = await core.broker();
  const deadline = Date.now() + Math.max(0, timeoutMs);
  let seen = false;
  for (;;) {
    const [rec] = await broker.getMessages([seq]);
    if (!rec) {
      // Seen before and gone now: it completed with nothing kept (resultTtlMs 0).
      if (seen) return undefined;
      throw new JobNotFoundError(id);
    }
    seen = true;
    switch (rec.state) {
      case "completed":
        return rec.result ? core.serializer.deserialize(rec.result) : undefined;
      case "dead_lettered":
        throw new JobFailedError(id, rec.lastError ?? rec.deadLetterDescription);
      case "cancelled":
        throw new JobCancelledError(id);
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new ResultTimeoutError(timeoutMs);
    await broker.awaitSettled([seq], { waitMs: Math.min(remaining, MAX_WAIT_SLICE_MS) });
  }
}

/** The result of a completed job, or undefined (not done, failed, cancelled, or no longer kept). */
export async function peekResult(core: QueueCore, id: string): Promise<unknown> {
  const seq = seqOf(id);
  if (seq === undefined) return undefined;
  const [rec] = await (await core.broker()).getMessages([seq]);
  if (rec?.state !== "completed" || !rec.result) return undefined;
  return core.serializer.deserialize(rec.result);
}
