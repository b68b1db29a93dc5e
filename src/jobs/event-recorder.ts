import type { EventInput } from "../contract/job-service.js";
import { MAX_EVENT_DATA_BYTES, MAX_EVENTS_PER_CALL } from "../contract/limits.js";
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

/** Room kept free in a row's data for the `jobIds` key and its brackets. */
const ROW_OVERHEAD_BYTES = 64;

/**
 * Events gathered for the next append. A run of events of one type whose payloads differ only by
 * their job id (a burst of enqueues of one task) is one row, `{ "jobIds": [...], ...rest }`, that
 * `QueueEvents` expands: a batch of 1,000 jobs costs one row, not 1,000.
 */
interface Gathered {
  type: SharedEvent;
  /** The payload without its job id, as JSON: what the run's events share. */
  rest: string;
  fields: Record<string, unknown>;
  jobIds: string[];
  bytes: number;
}

/**
 * The stored data of a gathered run: one event's own shape, or the shared fields with the ids. It
 * is made from `rest`, the fields as they were written when the run began (an object a field holds
 * may have changed since).
 */
function rowData(g: Gathered): string {
  if (g.jobIds.length === 0) return g.rest;
  const ids =
    g.jobIds.length === 1 ? `"jobId":${JSON.stringify(g.jobIds[0])}` : `"jobIds":${JSON.stringify(g.jobIds)}`;
  return g.rest === "{}" ? `{${ids}}` : `{${ids},${g.rest.slice(1)}`;
}

/** Whether no value of the event is an object (each a string, number, boolean, null or undefined). */
function flat(event: Record<string, unknown>): boolean {
  for (const key in event) {
    const v = event[key];
    if (typeof v === "object" && v !== null) return false;
  }
  return true;
}

/**
 * Copies this process's job events into the broker's event log, where `QueueEvents` in any process
 * reads them. Events are gathered for `FLUSH_DELAY_MS` and appended together (one write for a
 * burst), so a crash can lose the events of its last moments, never the jobs' own state.
 */
export class EventRecorder {
  private buffer: Gathered[] = [];
  /** Events recorded since the last fold, as emitted (see `record`). */
  private pending: { type: SharedEvent; event: Record<string, unknown> }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly core: QueueCore) {
    for (const name of SHARED_EVENTS) {
      core.events.on(name, (payload) => this.record(name, payload));
    }
  }

  private record(type: SharedEvent, payload: QueueEventMap[SharedEvent]): void {
    const event = payload as unknown as Record<string, unknown>;
    // Folding an event into the rows (taking it apart, writing it as JSON) waits for the flush: it
    // is off the path of the job that emitted it (`job.started` comes just before its handler
    // runs). An event that carries an object is folded at once, with what came before it: the
    // object could change before the flush.
    this.pending.push({ type, event });
    if (!flat(event)) this.fold();
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_DELAY_MS);
    }
  }

  /** Folds the pending events into the gathered rows, in the order they came. */
  private fold(): void {
    const pending = this.pending;
    this.pending = [];
    for (const { type, event } of pending) this.add(type, event);
  }

  private add(type: SharedEvent, event: Record<string, unknown>): void {
    const last = this.buffer.at(-1);
    // A burst (the enqueues of one batch): the event joins the run without being taken apart and
    // written as JSON again, which cost a sixth of a batch enqueue.
    if (last?.type === type && typeof event.jobId === "string" && this.sameFields(event, last.fields)) {
      const more = Buffer.byteLength(event.jobId) + 3;
      if (last.bytes + more <= MAX_EVENT_DATA_BYTES) {
        last.jobIds.push(event.jobId);
        last.bytes += more;
        return;
      }
    }
    const { jobId, ...fields } = event;
    if (typeof fields.error === "string" && fields.error.length > MAX_EVENT_ERROR_CHARS)
      fields.error = `${fields.error.slice(0, MAX_EVENT_ERROR_CHARS)}…`;
    if (this.core.namespace !== undefined) fields.namespace = this.core.namespace;
    const rest = JSON.stringify(fields);
    if (typeof jobId === "string") {
      const more = Buffer.byteLength(jobId) + 3;
      if (last && last.type === type && last.rest === rest && last.bytes + more <= MAX_EVENT_DATA_BYTES) {
        last.jobIds.push(jobId);
        last.bytes += more;
        return;
      }
      const bytes = Buffer.byteLength(rest) + ROW_OVERHEAD_BYTES + more;
      this.buffer.push({ type, rest, fields, jobIds: [jobId], bytes });
    } else {
      this.buffer.push({ type, rest, fields, jobIds: [], bytes: 0 });
    }
  }

  /**
   * Whether the event carries `fields` besides its job id, as it would store them: the same keys
   * with the same values, each a string, number or boolean (an object could have changed since).
   */
  private sameFields(event: Record<string, unknown>, fields: Record<string, unknown>): boolean {
    let keys = 0;
    for (const key in event) {
      if (key === "jobId") continue;
      const v = event[key];
      if (v !== fields[key] || (typeof v === "object" && v !== null)) return false;
      keys++;
    }
    if (this.core.namespace !== undefined) {
      if (fields.namespace !== this.core.namespace || "namespace" in event) return false;
      keys++;
    }
    return keys === Object.keys(fields).length;
  }

  /** Appends what is gathered; resolves once every event recorded so far is stored (or dropped on error). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.fold();
    const batch: EventInput[] = this.buffer.map((g) => ({ type: g.type, data: rowData(g) }));
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
