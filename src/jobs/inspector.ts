import type { Broker } from "../contract/broker.js";
import type { QueueStats } from "../contract/types.js";
import type { QueueCore } from "./core.js";
import { deadJobFromRecord, jobFromRecord, seqOf, statesOf } from "./job-record.js";
import { engineQueue, inNamespace, splitEngineQueue } from "./naming.js";
import type { DeadJob, Job, JobAttemptError, JobFilter, Stats, WorkerStatus } from "./types.js";

function toStats(s: QueueStats): Stats {
  return {
    pending: s.active + s.deferred + s.scheduled - s.backingOff,
    running: s.locked,
    completed: s.completed,
    failed: s.backingOff,
    dead: s.deadLettered,
    cancelled: s.cancelled,
  };
}

function add(into: Stats, s: Stats): void {
  into.pending += s.pending;
  into.running += s.running;
  into.completed += s.completed;
  into.failed += s.failed;
  into.dead += s.dead;
  into.cancelled += s.cancelled;
}

const emptyStats = (): Stats => ({ pending: 0, running: 0, completed: 0, failed: 0, dead: 0, cancelled: 0 });

/**
 * Reading and cleaning jobs: one job, lists, stats, errors, the dead-letter queue, workers. All of it
 * is scoped to the queue's namespace (every plain queue of the namespace is a job queue).
 */
export class Inspector {
  constructor(private readonly core: QueueCore) {}

  private broker(): Promise<Broker> {
    return this.core.broker();
  }

  /** The engine queues of the namespace. */
  async engineQueues(): Promise<string[]> {
    const all = await (await this.broker()).listQueues();
    return all
      .filter((q) => q.kind === "queue" && inNamespace(q.name, this.core.namespace))
      .map((q) => q.name);
  }

  async getJob(id: string): Promise<Job | null> {
    const seq = seqOf(id);
    if (seq === undefined) return null;
    const [rec] = await (await this.broker()).getMessages([seq]);
    return rec ? jobFromRecord(rec) : null;
  }

  async listJobs(filter: JobFilter = {}): Promise<Job[]> {
    const broker = await this.broker();
    const queues =
      filter.queue !== undefined
        ? [engineQueue(this.core.namespace, filter.queue)]
        : await this.engineQueues();
    const status = filter.status ? statesOf(filter.status) : undefined;
    const records = await broker.browse({
      queues,
      ...(status ? { states: status.states } : {}),
      ...(status?.backingOff !== undefined ? { backingOff: status.backingOff } : {}),
      ...(filter.task !== undefined ? { subject: filter.task } : {}),
      limit: filter.limit ?? 100,
      offset: filter.offset ?? 0,
    });
    return records.map(jobFromRecord);
  }

  async stats(): Promise<Stats> {
    const out = emptyStats();
    for (const s of Object.values(await this.statsAllQueues())) add(out, s);
    return out;
  }

  async statsByQueue(queue: string): Promise<Stats> {
    const broker = await this.broker();
    try {
      return toStats(await broker.stats(engineQueue(this.core.namespace, queue)));
    } catch {
      return emptyStats();
    }
  }

  async statsAllQueues(): Promise<Record<string, Stats>> {
    const broker = await this.broker();
    const out: Record<string, Stats> = {};
    for (const name of await this.engineQueues()) {
      out[splitEngineQueue(name).queue] = toStats(await broker.stats(name));
    }
    return out;
  }

  async purgeCompleted(olderThanMs = 0): Promise<number> {
    const broker = await this.broker();
    let n = 0;
    for (const q of await this.engineQueues()) {
      n += await broker.deleteSettled(q, { states: ["completed"], olderThanMs: Math.round(olderThanMs) });
    }
    return n;
  }

  async getJobErrors(id: string): Promise<JobAttemptError[]> {
    const seq = seqOf(id);
    if (seq === undefined) return [];
    const errors = await (await this.broker()).messageErrors(seq);
    return errors.map((e) => ({
      id: `${e.seqNumber}:${e.attempt}`,
      jobId: String(e.seqNumber),
      attempt: e.attempt,
      error: e.error,
      failedAt: e.failedAt,
    }));
  }

  async deadLetters(limit = 100, offset = 0, task?: string): Promise<DeadJob[]> {
    const broker = await this.broker();
    const records = await broker.browse({
      queues: await this.engineQueues(),
      states: ["dead_lettered"],
      order: "settled",
      limit,
      offset,
      ...(task !== undefined ? { subject: task } : {}),
    });
    return records.map(deadJobFromRecord);
  }

  /** Re-runs a dead job with a fresh retry budget (same id; notes and metadata kept). Null when it is not dead. */
  async retryDead(id: string): Promise<string | null> {
    const seq = seqOf(id);
    if (seq === undefined) return null;
    const broker = await this.broker();
    const [rec] = await broker.getMessages([seq]);
    if (rec?.state !== "dead_lettered" || !inNamespace(rec.queue, this.core.namespace)) return null;
    const moved = await broker.redrive(rec.queue, { seqNumbers: [seq] });
    return moved > 0 ? id : null;
  }

  async deleteDead(id: string): Promise<boolean> {
    const seq = seqOf(id);
    if (seq === undefined) return false;
    const broker = await this.broker();
    const [rec] = await broker.getMessages([seq]);
    if (rec?.state !== "dead_lettered") return false;
    return (await broker.deleteSettled(rec.queue, { states: ["dead_lettered"], seqNumbers: [seq] })) > 0;
  }

  async purgeDead(olderThanMs = 0): Promise<number> {
    const broker = await this.broker();
    let n = 0;
    for (const q of await this.engineQueues()) {
      n += await broker.deleteSettled(q, { states: ["dead_lettered"], olderThanMs: Math.round(olderThanMs) });
    }
    return n;
  }

  async listPausedQueues(): Promise<string[]> {
    const all = await (await this.broker()).listQueues();
    return all
      .filter((q) => q.paused && inNamespace(q.name, this.core.namespace))
      .map((q) => splitEngineQueue(q.name).queue);
  }

  async listWorkers(): Promise<WorkerStatus[]> {
    const workers = await (await this.broker()).listWorkers();
    return workers
      .filter((w) => (w.details?.namespace ?? undefined) === (this.core.namespace || undefined))
      .map((w) => {
        const out: WorkerStatus = {
          workerId: w.workerId,
          queues: w.queues.map((q) => splitEngineQueue(q).queue),
          status: w.status,
          lastHeartbeat: w.lastHeartbeat,
          startedAt: w.startedAt,
        };
        if (w.hostname !== undefined) out.hostname = w.hostname;
        if (w.pid !== undefined) out.pid = w.pid;
        if (w.concurrency !== undefined) out.concurrency = w.concurrency;
        if (w.details?.namespace) out.namespace = w.details.namespace;
        return out;
      });
  }
}
