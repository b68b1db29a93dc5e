import type { Broker } from "../contract/broker.js";
import { ClosedError, InvalidArgumentError, MqliteError } from "../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelMessageOptions,
  CancelOutcome,
  DeleteSettledOptions,
  HeartbeatResult,
  MessageRecord,
  ReceiveAnyOptions,
  WorkerInfo,
  WorkerRecord,
} from "../contract/job-service.js";
import type {
  AbandonOptions,
  BrokerStatus,
  CompleteItem,
  CompleteOptions,
  CompleteResult,
  FilterSample,
  LockRef,
  Message,
  OutgoingMessage,
  PeekOptions,
  PurgeOptions,
  QueueConfig,
  QueueInfo,
  QueueStats,
  ReceiveOptions,
  RedriveOptions,
  RejectOptions,
  RenewResult,
  SendOptions,
  SubscribeOptions,
  SubscriptionInfo,
  TestFilterResult,
} from "../contract/types.js";
import {
  attemptErrorFromWire,
  encodeBase64,
  messageFromWire,
  outgoingToWire,
  queueConfigToWire,
  queueInfoFromWire,
  type RequestInputOf,
  type ResponseOf,
  type RouteName,
  recordFromWire,
  sampleToWire,
  workerInfoToWire,
  workerRecordFromWire,
} from "../wire/index.js";
import { anySignal } from "./signals.js";
import { type ConnectOptions, Transport } from "./transport.js";

/** A whole number for an int field (the engine truncates the same way); NaN and absent are 0. */
const whole = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? 0 : Math.trunc(n));

/** Refuses a negative duration, as the embedded engine does (the wire itself would ignore it). */
function notNegative(value: number | undefined, field: string): number | undefined {
  if (value !== undefined && value < 0)
    throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
  return value;
}

const lockRefs = (items: LockRef[]) =>
  items.map((i) => ({ seq_number: i.seqNumber, lock_token: i.lockToken }));

/** What Complete keeps (our extension), on the wire. */
const keep = (o: CompleteOptions | undefined) => ({
  ...(o?.retainMs !== undefined && { retain_ms: o.retainMs }),
  ...(o?.result !== undefined && { result: encodeBase64(o.result) }),
});

/**
 * The `Broker` contract over HTTP: every call is one RPC of a served broker, with the same types,
 * the same named errors, and the same behaviour as the embedded engine.
 */
export class RemoteBroker implements Broker {
  private readonly http: Transport;

  constructor(url: string, options: ConnectOptions = {}) {
    this.http = new Transport(url, options);
  }

  // --- queues -------------------------------------------------------------------------------------

  async createQueue(name: string, config?: QueueConfig): Promise<void> {
    await this.http.call("createQueue", { name, config: queueConfigToWire(config) });
  }

  async deleteQueue(name: string): Promise<void> {
    await this.http.call("deleteQueue", { name });
  }

  async listQueues(): Promise<QueueInfo[]> {
    return (await this.http.call("listQueues", undefined)).queues.map(queueInfoFromWire);
  }

  async stats(queue: string): Promise<QueueStats> {
    const s = await this.http.call("stats", { queue });
    return {
      queue: s.queue,
      active: s.active,
      locked: s.locked,
      deferred: s.deferred,
      scheduled: s.scheduled,
      deadLettered: s.dead_lettered,
      completed: s.completed ?? 0,
      cancelled: s.cancelled ?? 0,
      backingOff: s.backing_off ?? 0,
      total: s.total,
      oldestMessageAgeMs: s.oldest_message_age_ms,
    };
  }

  // --- sending ------------------------------------------------------------------------------------

  async send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<number[]> {
    const list = (Array.isArray(messages) ? messages : [messages]).map(outgoingToWire);
    notNegative(options.ttlMs, "ttl_ms");
    if (list.length === 0) return [];
    const res = await this.http.call("send", {
      queue,
      messages: list,
      ...(options.scheduledAt !== undefined && { scheduled_enqueue_time_ms: options.scheduledAt }),
      ...(options.ttlMs !== undefined && { ttl_ms: options.ttlMs }),
    });
    return res.seq_numbers ?? [];
  }

  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options: Omit<SendOptions, "scheduledAt"> = {},
  ): Promise<number[]> {
    return this.send(queue, messages, { ...options, scheduledAt });
  }

  async cancel(queue: string, seqNumber: number): Promise<void> {
    await this.http.call("cancel", { queue, seq_number: seqNumber });
  }

  // --- receiving and settling -----------------------------------------------------------------------

  async receive(queue: string, options: ReceiveOptions = {}): Promise<Message[]> {
    const mode = options.mode ?? "peek-lock";
    if (mode !== "peek-lock" && mode !== "receive-and-delete") {
      throw new InvalidArgumentError(`mqlite: unknown receive mode "${mode}"`);
    }
    const res = await this.longPoll(
      "receive",
      {
        queue,
        max_messages: whole(options.maxMessages),
        wait_time_ms: whole(options.waitMs),
        receive_mode: mode === "receive-and-delete" ? 1 : 0,
        ...(options.attemptId && { receive_attempt_id: options.attemptId }),
      },
      options.signal,
    );
    return res ? res.messages.map(messageFromWire) : [];
  }

  /**
   * A long-poll RPC. It ends early with `undefined` (nothing) when the caller's signal aborts, and
   * with `ClosedError` when this client closes, as the embedded engine's long-polls do.
   */
  private async longPoll<K extends RouteName>(
    name: K,
    body: RequestInputOf<K>,
    callerSignal: AbortSignal | undefined,
  ): Promise<ResponseOf<K> | undefined> {
    const closing = this.http.closing.signal;
    const linked = anySignal(callerSignal ? [callerSignal, closing] : [closing]);
    try {
      return await this.http.call(name, body, linked.signal);
    } catch (err) {
      if (!linked.signal.aborted || err instanceof MqliteError) throw err;
      if (closing.aborted) throw new ClosedError();
      return undefined;
    } finally {
      linked.release();
    }
  }

  async receiveDeferred(queue: string, seqNumbers: number[]): Promise<Message[]> {
    return (await this.http.call("receiveDeferred", { queue, seq_numbers: seqNumbers })).messages.map(
      messageFromWire,
    );
  }

  async complete(
    queue: string,
    seqNumber: number,
    lockToken: string,
    options?: CompleteOptions,
  ): Promise<void> {
    await this.http.call("complete", {
      queue,
      seq_number: seqNumber,
      lock_token: lockToken,
      ...keep(options),
    });
  }

  async completeBatch(queue: string, items: CompleteItem[]): Promise<CompleteResult[]> {
    const messages = items.map((i) => ({ seq_number: i.seqNumber, lock_token: i.lockToken, ...keep(i) }));
    const res = await this.http.call("completeBatch", { queue, messages });
    return res.results.map((r) => ({ seqNumber: r.seq_number, ok: r.ok }));
  }

  async abandon(
    queue: string,
    seqNumber: number,
    lockToken: string,
    options: AbandonOptions = {},
  ): Promise<void> {
    const delay = notNegative(options.delayMs, "delay_ms");
    await this.http.call("abandon", {
      queue,
      seq_number: seqNumber,
      lock_token: lockToken,
      ...(delay !== undefined && { delay_ms: delay }),
      ...(options.error && { error: options.error }),
      ...(options.countDelivery === false && { count_delivery: false }),
    });
  }

  async reject(
    queue: string,
    seqNumber: number,
    lockToken: string,
    options: RejectOptions = {},
  ): Promise<void> {
    await this.http.call("reject", {
      queue,
      seq_number: seqNumber,
      lock_token: lockToken,
      ...(options.reason && { dead_letter_reason: options.reason }),
      ...(options.description && { dead_letter_description: options.description }),
      ...(options.error && { error: options.error }),
    });
  }

  async defer(queue: string, seqNumber: number, lockToken: string): Promise<void> {
    await this.http.call("defer", { queue, seq_number: seqNumber, lock_token: lockToken });
  }

  async renew(queue: string, seqNumber: number, lockToken: string): Promise<void> {
    await this.http.call("renew", { queue, seq_number: seqNumber, lock_token: lockToken });
  }

  async renewBatch(queue: string, items: LockRef[]): Promise<RenewResult[]> {
    const res = await this.http.call("renewBatch", { queue, messages: lockRefs(items) });
    return res.results.map((r) => ({
      seqNumber: r.seq_number,
      ok: r.ok,
      ...(r.locked_until_ms !== undefined && { lockedUntil: r.locked_until_ms }),
      ...(r.cancel_requested && { cancelRequested: true }),
    }));
  }

  // --- inspecting and the dead-letter queue ---------------------------------------------------------

  async peek(queue: string, options: PeekOptions = {}): Promise<Message[]> {
    const res = await this.http.call("peek", {
      queue,
      ...(options.fromSeq !== undefined && { from_seq: options.fromSeq }),
      ...(options.state && { state: options.state }),
      max: whole(options.max),
    });
    return res.messages.map(messageFromWire);
  }

  async redrive(queue: string, options: RedriveOptions = {}): Promise<number> {
    const res = await this.http.call("redrive", {
      queue,
      ...(options.target && { target: options.target }),
      ...(options.max !== undefined && { max: options.max }),
      ...(options.olderThanMs !== undefined && { older_than_ms: options.olderThanMs }),
      ...(options.ratePerSec !== undefined && { rate_per_sec: options.ratePerSec }),
      ...(options.seqNumbers !== undefined && { seq_numbers: options.seqNumbers }),
    });
    return res.moved;
  }

  async purge(queue: string, options: PurgeOptions = {}): Promise<number> {
    const res = await this.http.call("purge", {
      queue,
      ...(options.max !== undefined && { max: options.max }),
      ...(options.olderThanMs !== undefined && { older_than_ms: options.olderThanMs }),
    });
    return res.purged;
  }

  // --- topics -------------------------------------------------------------------------------------

  async subscribe(topic: string, name: string, options: SubscribeOptions = {}): Promise<void> {
    await this.http.call("subscribe", {
      topic,
      name,
      ...(options.filter && { filter: { expr: options.filter } }),
      ...(options.config && { config: queueConfigToWire(options.config) }),
    });
  }

  async unsubscribe(topic: string, name: string): Promise<void> {
    await this.http.call("unsubscribe", { topic, name });
  }

  async pauseSubscription(topic: string, name: string): Promise<void> {
    await this.http.call("pauseSubscription", { topic, name });
  }

  async resumeSubscription(topic: string, name: string): Promise<void> {
    await this.http.call("resumeSubscription", { topic, name });
  }

  async listSubscriptions(): Promise<SubscriptionInfo[]> {
    const res = await this.http.call("listSubscriptions", undefined);
    return res.subscriptions.map((s) => ({
      topic: s.topic,
      name: s.name,
      kind: (s.kind || "queue") as SubscriptionInfo["kind"],
      ...(s.expr && { filter: s.expr }),
      paused: s.paused ?? false,
      createdAt: s.created_at_ms ?? 0,
    }));
  }

  async testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult> {
    const r = await this.http.call("testFilter", {
      expr: filter,
      ...(sample && { message: sampleToWire(sample) }),
    });
    return { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched };
  }

  // --- the job face's capabilities (JobService) ------------------------------------------------------

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
    });
    return res.deleted;
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

  // --- the broker ---------------------------------------------------------------------------------

  async status(): Promise<BrokerStatus> {
    const s = await this.http.call("status", undefined);
    return {
      version: s.version,
      backend: s.backend as BrokerStatus["backend"],
      remote: s.remote,
      location: s.location,
      schemaVersion: s.schema_version,
      pingMs: s.ping_ms,
      dbSizeBytes: s.db_size_bytes,
      queues: s.queues,
      subscriptions: s.subscriptions,
      uptimeMs: s.uptime_ms,
      auth: s.auth,
      ...(s.sync && { synchronous: s.sync }),
    };
  }

  /** Closes this client (not the server): refuses new calls, ends long-polls, waits for calls in flight. */
  close(): Promise<void> {
    return this.http.close();
  }
}
