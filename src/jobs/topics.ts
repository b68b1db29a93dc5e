import type { Broker } from "../contract/broker.js";
import { NotFoundError } from "../contract/errors.js";
import type { TopicLogMessage as EngineTopicMessage } from "../contract/topic-service.js";
import type { OutgoingMessage } from "../contract/types.js";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";
import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  jobFromRecord,
  LEASE_GRACE_MS,
  PROP_METADATA,
  PROP_NOTES,
  PROP_RESULT_TTL,
} from "./job-record.js";
import { engineQueue, inNamespace, splitEngineQueue } from "./naming.js";
import { encodeNotes } from "./notes.js";
import { deserializeCall, serializeCall } from "./serializer.js";
import type {
  DeclaredTopic,
  LogConsumerOptions,
  LogHandler,
  PublishOptions,
  SubscriberOptions,
  Subscription,
  TopicLogStat,
  TopicMessage,
  TopicStat,
} from "./topic-types.js";
import type { Job } from "./types.js";

/** A subscriber registered in this process, written by `declareSubscriptions` or at worker start. */
interface PendingSubscription {
  topic: string;
  name: string;
  taskName: string;
  queue: string;
  durable: boolean;
  options: SubscriberOptions;
}

/** A managed log consumer registered in this process. */
export interface LogConsumer {
  topic: string;
  name: string;
  handler: LogHandler;
  pollIntervalMs: number;
  batchSize: number;
  onError: "retry" | "skip";
}

/** The lock whose holder reaps ephemeral subscriptions on its heartbeats (one worker at a time). */
export const REAPER_LOCK = "mqlite:topics:reaper";
export const REAPER_LOCK_TTL_MS = 15_000;

const FORBIDDEN_SUBSCRIBER_OPTIONS = [
  "codecs",
  "debounce",
  "debounceKey",
  "debounceMaxWait",
  "debounceReplacePayload",
];

const key = (topic: string, name: string) => `${topic}\u0000${name}`;

function nonNegative(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new QueueError(`${field} must be a non-negative number`);
  }
  return Math.trunc(value);
}

/** Seconds of the API to stored milliseconds (`Math.round(s * 1000)`). */
function secondsToMs(seconds: number, field: string): number {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) {
    throw new QueueError(`${field} must be a non-negative number of seconds`);
  }
  return Math.round(seconds * 1000);
}

function cursorOf(id: string | number): number {
  const n = typeof id === "number" ? id : Number(id);
  if (!Number.isSafeInteger(n) || n < 0) throw new QueueError(`"${id}" is not a topic message id`);
  return n;
}

/**
 * Topic pub/sub of the job face over the engine's task and log subscriptions: subscribers (a task
 * plus a subscription row), publish, pause/resume/unsubscribe, listings and stats, log topics with
 * cursors or per-message leases, declared topics, and the managed log consumers that workers run.
 */
export class Topics {
  private readonly pending = new Map<string, PendingSubscription>();
  readonly consumers = new Map<string, LogConsumer>();
  /** Which worker of this queue runs each consumer (one loop per consumer per queue). */
  private readonly running = new Map<string, string>();

  constructor(private readonly core: QueueCore) {}

  private broker(): Promise<Broker> {
    return this.core.broker();
  }

  private topicName(topic: string): string {
    if (typeof topic !== "string" || topic.length === 0) throw new QueueError("a topic name is required");
    return engineQueue(this.core.namespace, topic);
  }

  // --- subscribers -------------------------------------------------------------------------------

  /** Records a subscriber (its task is registered by the caller). Re-registering replaces the entry. */
  addSubscriber(topic: string, taskName: string, options: SubscriberOptions): void {
    for (const k of FORBIDDEN_SUBSCRIBER_OPTIONS) {
      if ((options as Record<string, unknown>)[k] !== undefined) {
        throw new QueueError(
          k === "codecs"
            ? "per-task codecs do not apply to topic deliveries: a publish encodes one payload with the queue serializer"
            : "debounce does not apply to topic deliveries (a publish never passes through enqueue)",
        );
      }
    }
    this.topicName(topic);
    const name = options.subscriptionName ?? taskName;
    if (typeof name !== "string" || name.length === 0)
      throw new QueueError("a subscription name is required");
    const queue = options.queue ?? "default";
    engineQueue(this.core.namespace, queue);
    if (options.priority !== undefined && !Number.isInteger(options.priority))
      throw new QueueError("priority must be an integer");
    this.pending.set(key(topic, name), {
      topic,
      name,
      taskName,
      queue,
      durable: options.durable !== false,
      options: { ...options },
    });
  }

  /** Writes one pending subscription (an ephemeral one owned by `owner`). */
  private async register(broker: Broker, p: PendingSubscription, owner: string | undefined): Promise<void> {
    const task = this.core.tasks.get(p.taskName);
    const maxRetries = p.options.maxRetries ?? task?.options.maxRetries ?? DEFAULT_MAX_RETRIES;
    const timeoutMs = p.options.timeoutMs ?? task?.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    await broker.subscribeTask(this.topicName(p.topic), p.name, {
      task: p.taskName,
      queue: engineQueue(this.core.namespace, p.queue),
      ...(p.durable ? {} : { durable: false, ...(owner !== undefined && { owner }) }),
      ...(p.options.priority !== undefined && { priority: p.options.priority }),
      maxDeliveryCount: Math.trunc(maxRetries) + 1,
      lockDurationMs: Math.trunc(timeoutMs) + LEASE_GRACE_MS,
      ...(p.options.filter && { filter: p.options.filter }),
    });
  }

  /** Writes the durable subscribers, then (re-)asserts the managed consumers' log subscriptions. */
  async declareSubscriptions(): Promise<void> {
    const broker = await this.broker();
    for (const p of this.pending.values()) if (p.durable) await this.register(broker, p, undefined);
    for (const c of this.consumers.values()) await broker.subscribeLog(this.topicName(c.topic), c.name);
  }

  /** What a starting worker writes: every subscriber (ephemeral ones owned by it) and every consumer. */
  async registerForWorker(workerId: string): Promise<void> {
    const broker = await this.broker();
    for (const p of this.pending.values()) await this.register(broker, p, p.durable ? undefined : workerId);
    for (const c of this.consumers.values()) await broker.subscribeLog(this.topicName(c.topic), c.name);
  }

  /** The consumers a starting worker runs: those no other worker of this queue runs. */
  claimConsumers(workerId: string): LogConsumer[] {
    const mine: LogConsumer[] = [];
    for (const [k, c] of this.consumers) {
      if (this.running.has(k)) continue;
      this.running.set(k, workerId);
      mine.push(c);
    }
    return mine;
  }

  releaseConsumers(workerId: string): void {
    for (const [k, w] of this.running) if (w === workerId) this.running.delete(k);
  }

  /** True when anything needs writing at worker start. */
  get hasRegistrations(): boolean {
    return this.pending.size > 0 || this.consumers.size > 0;
  }

  // --- publish ---------------------------------------------------------------------------------------

  async publish(topic: string, args: unknown[], options: PublishOptions): Promise<Job[]> {
    if (!Array.isArray(args)) throw new QueueError("args must be an array of positional arguments");
    const name = this.topicName(topic);
    const o = options ?? {};
    const maxRetries = nonNegative(o.maxRetries, "maxRetries");
    const timeoutMs = nonNegative(o.timeoutMs, "timeoutMs");
    if (timeoutMs !== undefined && timeoutMs < 1) throw new QueueError("timeoutMs must be at least 1");
    const delayMs = nonNegative(o.delayMs, "delayMs");
    const expiresMs = nonNegative(o.expiresMs, "expiresMs");
    const resultTtlMs = nonNegative(o.resultTtlMs, "resultTtlMs");
    if (o.priority !== undefined && !Number.isFinite(o.priority))
      throw new QueueError("priority must be a number");
    const message: OutgoingMessage = { body: serializeCall(this.core.serializer, args) };
    if (this.core.serializer.contentType) message.contentType = this.core.serializer.contentType;
    if (o.priority !== undefined) message.priority = Math.trunc(o.priority);
    if (maxRetries !== undefined) message.maxDeliveryCount = maxRetries + 1;
    if (timeoutMs !== undefined) message.lockDurationMs = timeoutMs + LEASE_GRACE_MS;
    if (delayMs) message.delayMs = delayMs;
    if (o.idempotencyKey !== undefined) {
      if (typeof o.idempotencyKey !== "string" || o.idempotencyKey.length === 0)
        throw new QueueError("idempotencyKey must be a non-empty string");
      message.uniqueKey = o.idempotencyKey;
    }
    const properties: Record<string, string> = {};
    if (o.metadata !== undefined) {
      if (typeof o.metadata !== "string") throw new QueueError("metadata must be a string");
      properties[PROP_METADATA] = o.metadata;
    }
    if (o.notes !== undefined) properties[PROP_NOTES] = encodeNotes(o.notes);
    if (resultTtlMs !== undefined) properties[PROP_RESULT_TTL] = String(resultTtlMs);
    if (Object.keys(properties).length > 0) message.properties = properties;
    const broker = await this.broker();
    let result: Awaited<ReturnType<Broker["publish"]>>;
    try {
      result = await broker.publish(name, message, expiresMs ? { ttlMs: expiresMs } : {});
    } catch (err) {
      // No subscription of any kind and not declared: a valid no-op.
      if (err instanceof NotFoundError) return [];
      throw err;
    }
    const seqs = result.deliveries.filter((d) => d.kind === "task").map((d) => d.seqNumber);
    if (seqs.length === 0) return [];
    const records = new Map((await broker.getMessages(seqs)).map((r) => [r.seqNumber, r]));
    return seqs.flatMap((s) => {
      const r = records.get(s);
      return r ? [jobFromRecord(r)] : [];
    });
  }

  // --- managing subscriptions ------------------------------------------------------------------------

  private async flag(op: (b: Broker) => Promise<void>): Promise<boolean> {
    try {
      await op(await this.broker());
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  pause(topic: string, name: string): Promise<boolean> {
    const t = this.topicName(topic);
    return this.flag((b) => b.pauseSubscription(t, name));
  }

  resume(topic: string, name: string): Promise<boolean> {
    const t = this.topicName(topic);
    return this.flag((b) => b.resumeSubscription(t, name));
  }

  unsubscribe(topic: string, name: string): Promise<boolean> {
    const t = this.topicName(topic);
    this.pending.delete(key(topic, name));
    this.consumers.delete(key(topic, name));
    return this.flag((b) => b.unsubscribe(t, name));
  }

  /** Every fan-out and log subscription of the namespace; with a topic, its active ones by creation time. */
  async list(topic?: string): Promise<Subscription[]> {
    const rows = (await (await this.broker()).listSubscriptions()).filter(
      (s) => s.kind !== "queue" && inNamespace(s.topic, this.core.namespace),
    );
    const picked =
      topic === undefined
        ? rows
        : rows
            .filter((s) => s.topic === this.topicName(topic) && !s.paused)
            .sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return picked.map((s) => {
      const out: Subscription = {
        topic: splitEngineQueue(s.topic).queue,
        subscriptionName: s.name,
        taskName: s.kind === "task" ? (s.task ?? "") : "",
        queue: s.kind === "task" ? splitEngineQueue(s.queue ?? "").queue : "default",
        active: !s.paused,
        durable: s.durable !== false,
        mode: s.kind === "task" ? "fanout" : "log",
      };
      if (s.filter) out.filter = s.filter;
      return out;
    });
  }

  async listTopics(): Promise<string[]> {
    return [...new Set((await this.list()).map((s) => s.topic))].sort();
  }

  async stats(topic?: string): Promise<TopicStat[]> {
    const broker = await this.broker();
    const rows = await broker.topicStats(topic === undefined ? undefined : this.topicName(topic));
    const now = Date.now();
    return rows
      .filter((r) => inNamespace(r.topic, this.core.namespace))
      .map((r) => {
        const s: TopicStat = {
          topic: splitEngineQueue(r.topic).queue,
          subscription: r.subscription,
          taskName: r.task,
          queue: splitEngineQueue(r.queue).queue,
          active: !r.paused,
          durable: r.durable,
          pending: r.pending,
          running: r.running,
          dead: r.dead,
        };
        if (r.oldestPendingAt !== undefined) s.oldestPendingAgeMs = Math.max(0, now - r.oldestPendingAt);
        return s;
      });
  }

  async reap(): Promise<number> {
    return (await this.broker()).reapSubscriptions();
  }

  // --- log topics --------------------------------------------------------------------------------------

  async subscribeLog(topic: string, name: string): Promise<void> {
    if (typeof name !== "string" || name.length === 0)
      throw new QueueError("a subscription name is required");
    await (await this.broker()).subscribeLog(this.topicName(topic), name);
  }

  addConsumer(topic: string, name: string, handler: LogHandler, options: LogConsumerOptions): LogConsumer {
    if (typeof handler !== "function") throw new QueueError("a log consumer needs a handler function");
    this.topicName(topic);
    const onError = options.onError ?? "retry";
    if (onError !== "retry" && onError !== "skip") throw new QueueError('onError is "retry" or "skip"');
    const consumer: LogConsumer = {
      topic,
      name,
      handler,
      pollIntervalMs: Math.max(1, nonNegative(options.pollIntervalMs, "pollIntervalMs") ?? 1000),
      batchSize: Math.max(1, nonNegative(options.batchSize, "batchSize") ?? 100),
      onError,
    };
    this.consumers.set(key(topic, name), consumer);
    return consumer;
  }

  async declareTopic(name: string, retentionSeconds: number | undefined): Promise<void> {
    const t = this.topicName(name);
    const retentionMs =
      retentionSeconds === undefined ? undefined : secondsToMs(retentionSeconds, "retention");
    await (await this.broker()).declareTopic(t, retentionMs === undefined ? {} : { retentionMs });
  }

  async listDeclared(): Promise<DeclaredTopic[]> {
    return (await (await this.broker()).listDeclaredTopics())
      .filter((d) => inNamespace(d.name, this.core.namespace))
      .map((d) => {
        const out: DeclaredTopic = {
          name: splitEngineQueue(d.name).queue,
          mode: "log",
          createdAt: d.createdAt,
        };
        if (d.retentionMs !== undefined) out.retentionMs = d.retentionMs;
        return out;
      });
  }

  /** The log messages of a subscription, raw (the managed consumers decode them one by one). */
  async readRaw(topic: string, name: string, limit: number): Promise<EngineTopicMessage[]> {
    return (await this.broker()).readTopic(this.topicName(topic), name, { limit });
  }

  async read(topic: string, name: string, limit = 100): Promise<TopicMessage[]> {
    return (await this.readRaw(topic, name, limit)).map((m) => this.decode(m));
  }

  async ack(topic: string, name: string, cursor: string | number): Promise<boolean> {
    return (await this.broker()).ackTopic(this.topicName(topic), name, cursorOf(cursor));
  }

  async lease(topic: string, name: string, limit = 100, visibilitySeconds = 30): Promise<TopicMessage[]> {
    const visibilityMs = secondsToMs(visibilitySeconds, "visibility");
    const got = await (await this.broker()).leaseTopic(this.topicName(topic), name, { limit, visibilityMs });
    return got.map((m) => this.decode(m));
  }

  async ackMessage(topic: string, name: string, id: string | number): Promise<boolean> {
    return (await this.broker()).ackMessage(this.topicName(topic), name, cursorOf(id));
  }

  async nackMessage(topic: string, name: string, id: string | number): Promise<boolean> {
    return (await this.broker()).nackMessage(this.topicName(topic), name, cursorOf(id));
  }

  async logStats(): Promise<TopicLogStat[]> {
    const now = Date.now();
    return (await (await this.broker()).topicLogStats())
      .filter((s) => inNamespace(s.topic, this.core.namespace))
      .map((s) => {
        const out: TopicLogStat = {
          topic: splitEngineQueue(s.topic).queue,
          subscription: s.subscription,
          lag: s.lag,
        };
        if (s.cursor !== undefined) out.cursor = String(s.cursor);
        if (s.oldestUnackedAt !== undefined) out.oldestUnackedAgeMs = Math.max(0, now - s.oldestUnackedAt);
        return out;
      });
  }

  /** A log message for the API: its arguments decoded with the queue serializer. */
  decode(m: EngineTopicMessage): TopicMessage {
    const out: TopicMessage = {
      id: String(m.id),
      args: deserializeCall(this.core.serializer, m.body),
      createdAt: m.enqueuedAt,
    };
    const metadata = m.properties?.[PROP_METADATA];
    if (metadata !== undefined) out.metadata = metadata;
    const notes = m.properties?.[PROP_NOTES];
    if (notes !== undefined) {
      try {
        out.notes = JSON.parse(notes) as Record<string, unknown>;
      } catch {
        // not JSON: left out
      }
    }
    return out;
  }
}
