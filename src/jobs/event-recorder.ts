import type { EventInput } from "../contract/job-service.js";
import { MAX_EVENT_DATA_BYTES, MAX_EVENTS_PER_CALL } from "../contract/limits.js";
import type { QueueCore } from "./core.js";
import type { BurstShared } from "./events.js";
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
 * Fields whose values may differ between the events of one row: each event's value is kept in the
 * row's `each` list, in the order of `jobIds` (a busy worker's completions differ by their duration
 * alone).
 */
const PER_JOB_FIELDS: readonly string[] = ["durationMs"];

/**
 * Events gathered for the next append. Events of one type whose payloads differ only by their job
 * id and their `PER_JOB_FIELDS` (the enqueues of a batch, the starts and completions of a busy
 * worker) are one row, `{ "jobIds": [...], "each": { "durationMs": [...] }, ...rest }`, that
 * `QueueEvents` expands: a batch of 1,000 jobs costs one row, not 1,000.
 */
interface Gathered {
  type: SharedEvent;
  /** The payload without its job id and per-job fields, as JSON: what the run's events share. */
  rest: string;
  fields: Record<string, unknown>;
  jobIds: string[];
  /** The per-job fields the run's events carry, each with one value per job id. */
  each: Record<string, unknown[]> | undefined;
  bytes: number;
  /** The shared payload of the burst (see `addBurst`) whose events the row takes without a look. */
  burst?: object;
}

/**
 * The stored data of a gathered run: one event's own shape, or the shared fields with the ids and
 * the per-job values. It is made from `rest`, the fields as they were written when the run began
 * (an object a field holds may have changed since).
 */
function rowData(g: Gathered): string {
  if (g.jobIds.length === 0) return g.rest;
  let own: string;
  if (g.jobIds.length === 1) {
    own = `"jobId":${JSON.stringify(g.jobIds[0])}`;
    for (const key in g.each) own += `,${JSON.stringify(key)}:${JSON.stringify(g.each[key]![0])}`;
  } else {
    own = `"jobIds":${JSON.stringify(g.jobIds)}`;
    if (g.each) own += `,"each":${JSON.stringify(g.each)}`;
  }
  return g.rest === "{}" ? `{${own}}` : `{${own},${g.rest.slice(1)}`;
}

/** The event's per-job fields, or undefined when it has none (or one is not a number: it is stored as it is). */
function perJobFields(event: Record<string, unknown>): string[] | undefined {
  const keys = PER_JOB_FIELDS.filter((key) => event[key] !== undefined);
  if (keys.length === 0 || keys.some((key) => typeof event[key] !== "number")) return undefined;
  return keys;
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
  /** The latest row of each type in `buffer` (its index). */
  private readonly latestOfType = new Map<SharedEvent, number>();
  /** The latest row in `buffer` holding an event of each job: a later event of the job must not go before it. */
  private readonly latestOfJob = new Map<string, number>();
  /**
   * Events recorded since the last fold, as emitted (see `record`): one event, or a burst's job ids
   * with what its events share.
   */
  private pending: { type: SharedEvent; event: Record<string, unknown>; jobIds?: readonly string[] }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly core: QueueCore) {
    for (const name of SHARED_EVENTS) {
      // Enqueues come in batches: taken as one call each (see `addBurst`).
      if (name === "job.enqueued")
        core.events.onBurst(name, (jobIds, shared) => this.record(name, shared, jobIds));
      else core.events.on(name, (payload) => this.record(name, payload));
    }
  }

  private record(
    type: SharedEvent,
    payload: QueueEventMap[SharedEvent] | BurstShared<SharedEvent>,
    jobIds?: readonly string[],
  ): void {
    const event = payload as unknown as Record<string, unknown>;
    // Folding an event into the rows (taking it apart, writing it as JSON) waits for the flush: it
    // is off the path of the job that emitted it (`job.started` comes just before its handler
    // runs). An event that carries an object is folded at once, with what came before it: the
    // object could change before the flush.
    this.pending.push(jobIds ? { type, event, jobIds } : { type, event });
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
    for (const { type, event, jobIds } of pending) {
      if (jobIds) this.addBurst(type, jobIds, event);
      else this.add(type, event);
    }
  }

  /**
   * Adds a burst's events, `{ jobId, ...shared }` for each job id, as `add` would one by one: an
   * event joins the row the burst's previous one went to without being compared or written again.
   */
  private addBurst(type: SharedEvent, jobIds: readonly string[], shared: Record<string, unknown>): void {
    for (const jobId of jobIds) {
      const at = this.latestOfType.get(type);
      const row = at === undefined ? undefined : this.buffer[at];
      if (
        row?.burst === shared &&
        (this.latestOfJob.get(jobId) ?? -1) <= at! &&
        this.join(row, jobId, shared, at!)
      )
        continue;
      this.add(type, { jobId, ...shared });
      const took = this.buffer[this.latestOfJob.get(jobId)!]!;
      // The row holds these fields and no per-job ones: the burst's next events may join it.
      if (took.each === undefined) took.burst = shared;
    }
  }

  private add(type: SharedEvent, event: Record<string, unknown>): void {
    const jobId = typeof event.jobId === "string" ? event.jobId : undefined;
    const at = this.latestOfType.get(type);
    const row = at === undefined ? undefined : this.buffer[at];
    // The latest row of this type takes the event unless the job has an event in a later row: the
    // events of different jobs within one flush may be grouped by type, each job's stay in order.
    const joinable =
      row && row.jobIds.length > 0 && jobId !== undefined && (this.latestOfJob.get(jobId) ?? -1) <= at!;
    // A like event joins without being taken apart and written as JSON again, which cost a sixth of
    // a batch enqueue.
    if (joinable && this.sameFields(event, row) && this.join(row, jobId, event, at!)) return;
    const perJob = perJobFields(event);
    const { jobId: _id, ...fields } = event;
    const each: Record<string, unknown[]> | undefined =
      jobId !== undefined && perJob ? Object.fromEntries(perJob.map((k) => [k, []])) : undefined;
    for (const key in each) delete fields[key];
    if (typeof fields.error === "string" && fields.error.length > MAX_EVENT_ERROR_CHARS)
      fields.error = `${fields.error.slice(0, MAX_EVENT_ERROR_CHARS)}…`;
    if (this.core.namespace !== undefined) fields.namespace = this.core.namespace;
    const rest = JSON.stringify(fields);
    if (joinable && row.rest === rest && sameKeys(each, row.each) && this.join(row, jobId, event, at!))
      return;
    const g: Gathered = { type, rest, fields, jobIds: [], each, bytes: 0 };
    const index = this.buffer.push(g) - 1;
    this.latestOfType.set(type, index);
    if (jobId === undefined) return;
    g.bytes = Buffer.byteLength(rest) + ROW_OVERHEAD_BYTES + (each ? JSON.stringify(each).length + 8 : 0);
    this.join(g, jobId, event, index, true);
  }

  /**
   * Adds the event's job (and its per-job values) to `row`, at `index`; false if that would take
   * the row past the size of an event's data (a row's first event is always added).
   */
  private join(
    row: Gathered,
    jobId: string,
    event: Record<string, unknown>,
    index: number,
    first = false,
  ): boolean {
    let more = Buffer.byteLength(jobId) + 3;
    for (const key in row.each) more += String(event[key]).length + 1;
    if (!first && row.bytes + more > MAX_EVENT_DATA_BYTES) return false;
    row.jobIds.push(jobId);
    for (const key in row.each) row.each[key]!.push(event[key]);
    row.bytes += more;
    this.latestOfJob.set(jobId, index);
    return true;
  }

  /**
   * Whether the event carries `row`'s fields besides its job id and per-job fields, as it would
   * store them: the same keys with the same values, each a string, number or boolean (an object
   * could have changed since), and numbers for the row's per-job fields.
   */
  private sameFields(event: Record<string, unknown>, row: Gathered): boolean {
    const fields = row.fields;
    let keys = 0;
    let perJob = 0;
    for (const key in event) {
      if (key === "jobId") continue;
      const v = event[key];
      if (row.each && key in row.each) {
        if (typeof v !== "number") return false;
        perJob++;
        continue;
      }
      if (v !== fields[key] || (typeof v === "object" && v !== null)) return false;
      keys++;
    }
    if (perJob !== (row.each ? Object.keys(row.each).length : 0)) return false;
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
    this.latestOfType.clear();
    this.latestOfJob.clear();
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

/** Whether two runs carry the same per-job fields. */
function sameKeys(
  a: Record<string, unknown[]> | undefined,
  b: Record<string, unknown[]> | undefined,
): boolean {
  const ka = a ? Object.keys(a) : [];
  const kb = b ? Object.keys(b) : [];
  return ka.length === kb.length && ka.every((k) => kb.includes(k));
}
