import type { Broker } from "../contract/broker.js";
import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../contract/consume.js";
import { InvalidArgumentError } from "../contract/errors.js";
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
  ReceiveDeferredOptions,
  ReceiveOptions,
  RedriveOptions,
  RejectOptions,
  RenewBatchOptions,
  RenewResult,
  SendOptions,
  SubscribeOptions,
  SubscriptionInfo,
  TestFilterResult,
} from "../contract/types.js";
import {
  messageFromWire,
  outgoingToWire,
  queueConfigToWire,
  queueInfoFromWire,
  sampleToWire,
} from "../wire/index.js";
import { keep, lockRefs, maxBytesField, notNegative, whole } from "./encode.js";
import { RemoteTopicService } from "./remote-topics.js";

/**
 * The `Broker` contract over HTTP: every call is one RPC of a served broker, with the same types,
 * the same named errors, and the same behaviour as the embedded engine.
 */
export class RemoteBroker extends RemoteTopicService implements Broker {
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
        ...maxBytesField(options.maxBytes),
      },
      options.signal,
    );
    return res ? res.messages.map(messageFromWire) : [];
  }

  async receiveDeferred(
    queue: string,
    seqNumbers: number[],
    options: ReceiveDeferredOptions = {},
  ): Promise<Message[]> {
    const req = { queue, seq_numbers: seqNumbers, ...maxBytesField(options.maxBytes) };
    return (await this.http.call("receiveDeferred", req)).messages.map(messageFromWire);
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

  async renewBatch(queue: string, items: LockRef[], options: RenewBatchOptions = {}): Promise<RenewResult[]> {
    const res = await this.http.call("renewBatch", {
      queue,
      messages: lockRefs(items),
      ...(options.lockDurationMs !== undefined && { lock_duration_ms: options.lockDurationMs }),
    });
    return res.results.map((r) => ({
      seqNumber: r.seq_number,
      ok: r.ok,
      ...(r.locked_until_ms !== undefined && { lockedUntil: r.locked_until_ms }),
      ...(r.cancel_requested && { cancelRequested: true }),
    }));
  }

  /** The consumer loop (one implementation for every broker: contract/consume.ts). */
  consume(queue: string, handler: ConsumeHandler, options?: ConsumeOptions): Consumer {
    return consume(this, queue, handler, options);
  }

  // --- inspecting and the dead-letter queue ---------------------------------------------------------

  async peek(queue: string, options: PeekOptions = {}): Promise<Message[]> {
    const res = await this.http.call("peek", {
      queue,
      ...(options.fromSeq !== undefined && { from_seq: options.fromSeq }),
      ...(options.state && { state: options.state }),
      max: whole(options.max),
      ...maxBytesField(options.maxBytes),
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
      ...(s.task !== undefined && { task: s.task }),
      ...(s.queue !== undefined && { queue: s.queue }),
      ...(s.durable !== undefined && { durable: s.durable }),
      ...(s.owner !== undefined && { owner: s.owner }),
      ...(s.priority !== undefined && { priority: s.priority }),
      ...(s.max_delivery_count !== undefined && { maxDeliveryCount: s.max_delivery_count }),
      ...(s.lock_duration_ms !== undefined && { lockDurationMs: s.lock_duration_ms }),
      ...(s.cursor !== undefined && { cursor: s.cursor }),
    }));
  }

  async testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult> {
    const r = await this.http.call("testFilter", {
      expr: filter,
      ...(sample && { message: sampleToWire(sample) }),
    });
    return { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched };
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
}
