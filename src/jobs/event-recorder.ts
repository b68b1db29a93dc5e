import type { EventInput } from "../contract/job-service.js";
import { MAX_EVENTS_PER_CALL } from "../contract/limits.js";
import type { QueueCore } from "./core.js";
import type { QueueEventMap } from "./types.js";

/** The job events `QueueEvents` reads across processes. */
export const SHARED_EVENTS = [
  "job.enqueued",
  "job.started",
  "job.progress",
  "job.completed",
  "job.failed",
  "job.retrying",
  "job.dead",
  "job.cancelled",
] as const satisfies readonly (keyof QueueEventMap)[];

export type SharedEvent = (typeof SHARED_EVENTS)[number];

/** An error text longer than this is cut in the event log (an event's data is at most 8 KiB). */
const MAX_EVENT_ERROR_CHARS = 2000;

/**
 * How long events gather before one append stores them: a burst of jobs costs one write, not one
 * per event (listeners read the log every 100 ms by default, so this adds little to their delay).
 */
const FLUSH_DELAY_MS = 20;

/**
 * Copies this process's job events into the broker's event log, where `QueueEvents` in any process
 * reads them. Events are gathered for `FLUSH_DELAY_MS` and appended together (one write for a
 * burst), so a crash can lose the events of its last moments, never the jobs' own state.
 */
export class EventRecorder {
  private buffer: EventInput[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly core: QueueCore) {
    for (const name of SHARED_EVENTS) {
      core.events.on(name, (payload) => this.record(name, payload));
    }
  }

  private record(type: SharedEvent, payload: QueueEventMap[SharedEvent]): void {
    const data: Record<string, unknown> = { ...payload };
    if (typeof data.error === "string" && data.error.length > MAX_EVENT_ERROR_CHARS)
      data.error = `${data.error.slice(0, MAX_EVENT_ERROR_CHARS)}…`;
    if (this.core.namespace !== undefined) data.namespace = this.core.namespace;
    this.buffer.push({ type, data: JSON.stringify(data) });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_DELAY_MS);
    }
  }

  /** Appends what is gathered; resolves once every event recorded so far is stored (or dropped on error). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      this.flushing = this.flushing.then(() => this.append(batch));
    }
    return this.flushing;
  }

  private async append(batch: EventInput[]): Promise<void> {
    try {
      const broker = await this.core.broker();
      for (let i = 0; i < batch.length; i += MAX_EVENTS_PER_CALL) {
        await broker.appendEvents(batch.slice(i, i + MAX_EVENTS_PER_CALL));
      }
    } catch (err) {
      this.core.logger.warn({ events: batch.length, err: String(err) }, "could not store job events");
    }
  }
}
