import { InvalidArgumentError } from "../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelMessageOptions,
  CancelOutcome,
  DebouncedSend,
  DebounceOptions,
  DeleteSettledOptions,
  Dependency,
  EventInput,
  EventPage,
  FlowNode,
  HeartbeatResult,
  JobService,
  MessageLogPage,
  MessageRecord,
  MetricIncrement,
  MetricKind,
  MetricPoint,
  MetricsQuery,
  ReceiveAnyOptions,
  WorkerInfo,
  WorkerRecord,
} from "../contract/job-service.js";
import type { Message, OutgoingMessage } from "../contract/types.js";
import {
  attemptErrorFromWire,
  dependencyFromWire,
  messageFromWire,
  messageLogFromWire,
  outgoingToWire,
  recordFromWire,
  workerInfoToWire,
  workerRecordFromWire,
} from "../wire/index.js";
import { maxBytesField, whole } from "./encode.js";
import { RemoteBase } from "./remote-base.js";

/** The job face's engine capabilities over HTTP (`mqlite.v1.JobService/*`). */
export abstract class RemoteJobService extends RemoteBase implements JobService {
  async pauseQueue(name: string): Promise<void> {
    await this.http.call("pauseQueue", { name });
  }

  async resumeQueue(name: string): Promise<void> {
    await this.http.call("resumeQueue", { name });
  }

  async receiveAny(queues: string[], options: ReceiveAnyOptions = {}): Promise<Message[]> {
    if (!Array.isArray(queues)) throw new InvalidArgumentError("mqlite: queues must be a list");
    const res = await this.longPoll(
      "receiveAny",
      {
        queues,
        max_messages: whole(options.maxMessages),
        wait_time_ms: whole(options.waitMs),
        ...(options.gates && {
          gates: options.gates.map((g) => ({
            subject: g.subject,
            ...(g.maxLocked !== undefined && { max_locked: g.maxLocked }),
            ...(g.rate && { rate: { limit: g.rate.limit, interval_ms: g.rate.intervalMs } }),
          })),
        }),
        ...(options.lockDurationMs !== undefined && { lock_duration_ms: options.lockDurationMs }),
        ...maxBytesField(options.maxBytes),
      },
      options.signal,
    );
    return res ? res.messages.map(messageFromWire) : [];
  }

  async cancelMessage(
    queue: string,
    seqNumber: number,
    options: CancelMessageOptions = {},
  ): Promise<CancelOutcome> {
    const res = await this.http.call("cancelMessage", {
      queue,
      seq_number: seqNumber,
      ...(options.lockToken && { lock_token: options.lockToken }),
      ...(options.retainMs !== undefined && { retain_ms: options.retainMs }),
    });
    return res.outcome;
  }

  async setProgress(queue: string, seqNumber: number, lockToken: string, progress: number): Promise<void> {
    await this.http.call("setProgress", { queue, seq_number: seqNumber, lock_token: lockToken, progress });
  }

  async getMessages(seqNumbers: number[]): Promise<MessageRecord[]> {
    return (await this.http.call("getMessages", { seq_numbers: seqNumbers })).messages.map(recordFromWire);
  }

  async browse(options: BrowseOptions = {}): Promise<MessageRecord[]> {
    const res = await this.http.call("browse", {
      ...(options.queues && { queues: options.queues }),
      ...(options.states && { states: options.states }),
      ...(options.backingOff !== undefined && { backing_off: options.backingOff }),
      ...(options.subject !== undefined && { subject: options.subject }),
      ...(options.settledBefore !== undefined && { settled_before_ms: options.settledBefore }),
      ...(options.limit !== undefined && { limit: options.limit }),
      ...(options.offset !== undefined && { offset: options.offset }),
      ...(options.order && { order: options.order }),
    });
    return res.messages.map(recordFromWire);
  }

  async messageErrors(seqNumber: number): Promise<AttemptError[]> {
    return (await this.http.call("messageErrors", { seq_number: seqNumber })).errors.map(
      attemptErrorFromWire,
    );
  }

  async awaitSettled(
    seqNumbers: number[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<number[]> {
    const res = await this.longPoll(
      "awaitSettled",
      { seq_numbers: seqNumbers, wait_time_ms: whole(options.waitMs) },
      options.signal,
    );
    return res ? res.seq_numbers : [];
  }

  async deleteSettled(queue: string, options: DeleteSettledOptions = {}): Promise<number> {
    const res = await this.http.call("deleteSettled", {
      queue,
      ...(options.states && { states: options.states }),
      ...(options.olderThanMs !== undefined && { older_than_ms: options.olderThanMs }),
      ...(options.seqNumbers && { seq_numbers: options.seqNumbers }),
      ...(options.subject !== undefined && { subject: options.subject }),
      ...(options.keepNewest !== undefined && { keep_newest: options.keepNewest }),
    });
    return res.deleted;
  }

  async promoteMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return (await this.http.call("promoteMessages", { queue, seq_numbers: seqNumbers })).promoted;
  }

  async removeMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return (await this.http.call("removeMessages", { queue, seq_numbers: seqNumbers })).removed;
  }

  async heartbeat(worker: WorkerInfo, options: { staleAfterMs?: number } = {}): Promise<HeartbeatResult> {
    const res = await this.http.call("heartbeat", {
      worker: workerInfoToWire(worker),
      ...(options.staleAfterMs !== undefined && { stale_after_ms: options.staleAfterMs }),
    });
    return { registered: res.registered, reaped: res.reaped.map(workerRecordFromWire) };
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    return (await this.http.call("listWorkers", undefined)).workers.map(workerRecordFromWire);
  }

  async removeWorker(workerId: string): Promise<boolean> {
    return (await this.http.call("removeWorker", { worker_id: workerId })).removed;
  }

  async acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.http.call("acquireLock", { name, owner, ttl_ms: ttlMs })).acquired;
  }

  async releaseLock(name: string, owner: string): Promise<boolean> {
    return (await this.http.call("releaseLock", { name, owner })).released;
  }

  // --- flows, message logs and the event log ------------------------------------------------------

  async sendFlow(nodes: FlowNode[]): Promise<number[]> {
    if (!Array.isArray(nodes)) throw new InvalidArgumentError("mqlite: nodes must be a list");
    const res = await this.http.call("sendFlow", {
      nodes: nodes.map((n) => ({
        queue: n.queue,
        message: outgoingToWire(n.message),
        ...(n.parent !== undefined && { parent: n.parent }),
        ...(n.failParentOnFailure === false && { fail_parent_on_failure: false }),
      })),
    });
    return res.seq_numbers;
  }

  async releaseDependents(seqNumbers?: number[]): Promise<number> {
    return (await this.http.call("releaseDependents", seqNumbers ? { seq_numbers: seqNumbers } : {}))
      .released;
  }

  async dependencies(seqNumber: number): Promise<Dependency[]> {
    return (await this.http.call("dependencies", { seq_number: seqNumber })).dependencies.map(
      dependencyFromWire,
    );
  }

  async appendMessageLog(
    queue: string,
    seqNumber: number,
    lockToken: string,
    lines: string[],
  ): Promise<number> {
    const res = await this.http.call("appendMessageLog", {
      queue,
      seq_number: seqNumber,
      lock_token: lockToken,
      lines,
    });
    return res.total;
  }

  async messageLog(
    seqNumber: number,
    options: { offset?: number; limit?: number } = {},
  ): Promise<MessageLogPage> {
    const res = await this.http.call("messageLog", {
      seq_number: seqNumber,
      ...(options.offset !== undefined && { offset: options.offset }),
      ...(options.limit !== undefined && { limit: options.limit }),
    });
    return messageLogFromWire(res);
  }

  async appendEvents(events: EventInput[]): Promise<void> {
    if (!Array.isArray(events)) throw new InvalidArgumentError("mqlite: events must be a list");
    if (events.length === 0) return;
    await this.http.call("appendEvents", { events: events.map((e) => ({ type: e.type, data: e.data })) });
  }

  async readEvents(afterId: number, options: { limit?: number } = {}): Promise<EventPage> {
    const res = await this.http.call("readEvents", {
      after_id: afterId,
      ...(options.limit !== undefined && { limit: options.limit }),
    });
    return {
      events: res.events.map((e) => ({ id: e.id, at: e.at_ms, type: e.type, data: e.data })),
      lastId: res.last_id,
    };
  }

  // --- job metrics and debounced sends ------------------------------------------------------------

  async addMetrics(increments: MetricIncrement[]): Promise<void> {
    if (!Array.isArray(increments)) throw new InvalidArgumentError("mqlite: increments must be a list");
    if (increments.length === 0) return;
    await this.http.call("addMetrics", {
      increments: increments.map((i) => ({ queue: i.queue, kind: i.kind, count: i.count })),
    });
  }

  async readMetrics(kind: MetricKind, query: MetricsQuery = {}): Promise<MetricPoint[]> {
    const res = await this.http.call("readMetrics", {
      kind,
      ...(query.queues !== undefined && { queues: query.queues }),
      ...(query.from !== undefined && { from_ms: query.from }),
      ...(query.to !== undefined && { to_ms: query.to }),
    });
    return res.points.map((p) => ({ minute: p.minute_ms, count: p.count }));
  }

  async sendDebounced(
    queue: string,
    message: OutgoingMessage,
    options: DebounceOptions,
  ): Promise<DebouncedSend> {
    const res = await this.http.call("sendDebounced", {
      queue,
      message: outgoingToWire(message),
      key: options.key,
      window_ms: options.windowMs,
      max_wait_ms: options.maxWaitMs,
      ...(options.replaceBody === true && { replace_body: true }),
    });
    return { seqNumber: res.seq_number, created: res.created };
  }
}
