import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../contract/consume.js";
import { InvalidArgumentError, NameConflictError } from "../contract/errors.js";
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
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type { Logger } from "../contract/logger.js";
import type {
  DeclareTopicOptions,
  EngineDeclaredTopic,
  EngineTopicLogStat,
  LeaseTopicOptions,
  LogSubscribeOptions,
  PublishResult,
  ReadTopicOptions,
  ReapOptions,
  TaskSubscribeOptions,
  TopicBacklog,
  TopicLogMessage,
} from "../contract/topic-service.js";
import type {
  AbandonOptions,
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
  Readiness,
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
import { MESSAGE_STATES } from "../contract/types.js";
import { answerBytes } from "./answer-budget.js";
import type { Clock } from "./clock.js";
import type { DlqBounds } from "./dlq-bounds.js";
import { DEFAULT_VISIBILITY_MS, EPHEMERAL_GRACE_MS, EPHEMERAL_LIVENESS_MS } from "./fanout.js";
import { checkFilter, testFilter } from "./filters.js";
import { checkEvents, checkLogLines, eventLimit, logPage, prepareFlow } from "./flow-input.js";
import { validateGates } from "./gates.js";
import { leaseCap } from "./lease.js";
import { DEFAULT_WORKER_STALE_MS, MAX_WAIT_MS } from "./limits.js";
import { longPoll } from "./long-poll.js";
import { Loops, type MaintenanceStep } from "./loops.js";
import { emptyResult, type MaintenanceResult, mergeResult } from "./maintenance-result.js";
import { checkDebounce, checkIncrements, metricKind } from "./metrics-input.js";
import { type PreparedMessage, prepareMessages, prepareMessagesInSlices } from "./outgoing.js";
import {
  CLAIM_STEP_ITEMS,
  DELETE_STEP_ROWS,
  type Dialect,
  LONG_WRITE_ITEMS,
  MARK_STEP_ROWS,
  SETTLE_STEP_ITEMS,
  STEP_ITEMS,
  type Verb,
  type WriteOptions,
  type WriteScope,
} from "./port.js";
import type { QueueRow } from "./queue-config.js";
import { normalizeQueueConfig } from "./queue-config.js";
import { browseQuery, deleteSettledQuery, progressValue } from "./record-input.js";
import { type SendBatch, SendBatches } from "./send-batches.js";
import { awaitSettled } from "./settled-waits.js";
import { taskSpec } from "./subscription-rows.js";
import {
  clampCount,
  integer,
  nonNegative,
  nonNegativeDuration,
  requireName,
  seqNumber,
  seqNumberList,
} from "./validate.js";
import * as claim from "./verbs/claim.js";
import * as deadLetters from "./verbs/dead-letters.js";
import * as dependencies from "./verbs/dependencies.js";
import * as flows from "./verbs/flows.js";
import * as maintenance from "./verbs/maintenance.js";
import * as namedLocks from "./verbs/named-locks.js";
import * as queues from "./verbs/queues.js";
import * as records from "./verbs/records.js";
import * as send from "./verbs/send.js";
import { sendDebounced } from "./verbs/send-debounce.js";
import { plainSend } from "./verbs/send-rows.js";
import * as settle from "./verbs/settle.js";
import * as subscriptions from "./verbs/subscriptions.js";
import * as topics from "./verbs/topics.js";
import * as workers from "./verbs/workers.js";
import type { Held, Take, Waiters } from "./waiters.js";

/**
 * The broker's verbs, written once over a storage dialect. A verb validates its input here (bad
 * input is refused before any transaction), then runs its rule (`verbs/*.ts`) in the dialect's
 * transaction. The SQLite and PostgreSQL brokers extend this class with their connection handling.
 */
export abstract class CoreBroker {
  /** The dialect's transactions (set by the subclass's constructor). */
  protected abstract readonly dialect: Dialect;
  /** Concurrent plain sends to one queue, written together (see `sendFreshTo`). */
  private readonly sendBatches = new SendBatches();

  // --- settlement -------------------------------------------------------------------------------

  complete(queue: string, seq: number, lockToken: string, options?: CompleteOptions): Promise<void> {
    return this.guard(() => {
      const keep = keepOptions(options);
      const s = seqNumber(seq);
      return this.queueWrite((w) => settle.complete(w, queue, s, lockToken, keep), { oneStatement: true });
    });
  }

  completeBatch(queue: string, items: CompleteItem[]): Promise<CompleteResult[]> {
    return this.guard(() => {
      const refs = items.map((i) => ({
        seqNumber: seqNumber(i.seqNumber),
        lockToken: i.lockToken,
        keep: keepOptions(i),
      }));
      // Where statements hold the event loop, a batch of more than one step is a long write:
      // SQLite spends ~45 µs a settlement, so 999 of them in one go held the loop for 45 ms.
      const step = this.dialect.stepsHoldTheLoop ? SETTLE_STEP_ITEMS : STEP_ITEMS;
      const stepped = refs.length > step;
      return this.queueWrite((w) => settle.completeBatch(w, queue, refs, step), {
        oneStatement: !stepped,
        long: stepped && this.dialect.stepsHoldTheLoop,
      });
    });
  }

  abandon(queue: string, seq: number, lockToken: string, options: AbandonOptions = {}): Promise<void> {
    return this.guard(() => {
      const input = {
        delayMs: nonNegativeDuration(options.delayMs, "delay_ms"),
        countDelivery: options.countDelivery !== false,
        error: options.error,
      };
      const s = seqNumber(seq);
      return this.queueWrite((w) => settle.abandon(w, queue, s, lockToken, input), { oneStatement: true });
    });
  }

  reject(queue: string, seq: number, lockToken: string, options: RejectOptions = {}): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.queueWrite((w) => settle.reject(w, queue, s, lockToken, options), {
        oneStatement: true,
      });
    });
  }

  defer(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.queueWrite((w) => settle.defer(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renew(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.queueWrite((w) => settle.renew(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renewBatch(queue: string, items: LockRef[], options: RenewBatchOptions = {}): Promise<RenewResult[]> {
    return this.guard(() => {
      if (items.length > MAX_RENEW_BATCH) {
        throw new InvalidArgumentError(`mqlite: at most ${MAX_RENEW_BATCH} renewals per batch`);
      }
      const capMs = leaseCap(options.lockDurationMs);
      if (items.every((i) => !i.lockToken)) {
        return Promise.resolve(items.map((i) => ({ seqNumber: i.seqNumber, ok: false })));
      }
      const refs = items.map((i) => ({ seqNumber: seqNumber(i.seqNumber), lockToken: i.lockToken }));
      return this.queueWrite((w) => settle.renewBatch(w, queue, refs, capMs), { oneStatement: true });
    });
  }

  // --- claim: receive, receiveDeferred, receiveAny, peek: claiming with ordering, priority, gates and long-polls ---

  /** The clock every verb reads its time from. */
  abstract readonly clock: Clock;

  /** The long-polls parked per queue; the dialect wakes them for its own and other processes' writes. */
  protected abstract readonly waiters: Waiters<Message>;

  /**
   * How a parked receiver claims inside the transaction of a write that made messages claimable
   * (a hand-off), for a dialect that offers it; none by default.
   */
  protected handOff(
    _claim: (s: WriteScope, limit: number) => Verb<claim.Claimed>,
  ): Take<Message> | undefined {
    return undefined;
  }

  /**
   * How many messages a claim of `max` takes a statement: `CLAIM_STEP_ITEMS` where statements hold
   * the event loop and `max` is more (the claim is then a long write), else all at once (undefined).
   */
  private claimStep(max: number): number | undefined {
    return this.dialect.stepsHoldTheLoop && max > CLAIM_STEP_ITEMS ? CLAIM_STEP_ITEMS : undefined;
  }

  receive(queue: string, options: ReceiveOptions = {}): Promise<Message[]> {
    return this.guard(() => {
      const max = clampCount(options.maxMessages, 1, claim.MAX_RECEIVE);
      const waitMs = claim.waitTime(options.waitMs);
      const mode = options.mode ?? "peek-lock";
      if (mode !== "peek-lock" && mode !== "receive-and-delete") {
        throw new InvalidArgumentError(`mqlite: unknown receive mode "${mode}"`);
      }
      const step = this.claimStep(max);
      const input = {
        max,
        mode,
        attemptId: options.attemptId || undefined,
        maxBytes: options.maxBytes,
        step,
      };
      const signal = options.signal;
      const verb = (w: WriteScope, limit: number) =>
        claim.receiveClaim(w, queue, limit < max ? { ...input, max: limit } : input);
      // A plain claim is one statement; an attempt also reads and records its answer.
      const oneStatement = mode === "peek-lock" && !input.attemptId;
      return longPoll(this.clock, this.waiters, {
        keys: [queue],
        waitMs,
        signal,
        claim: () =>
          this.queueWrite((w) => verb(w, max), {
            oneStatement: oneStatement && !step,
            long: step !== undefined,
            signal,
          }),
        take: waitMs > 0 ? this.handOff(verb) : undefined,
        plain: waitMs > 0 && oneStatement ? { max, capMs: 0, maxBytes: input.maxBytes } : undefined,
      });
    });
  }

  receiveAny(queues: string[], options: ReceiveAnyOptions = {}): Promise<Message[]> {
    return this.guard(() => {
      if (!Array.isArray(queues)) throw new InvalidArgumentError("mqlite: queues must be a list");
      for (const q of queues) requireName(q, "queue");
      validateGates(options.gates);
      const max = clampCount(options.maxMessages, 1, claim.MAX_RECEIVE);
      const step = this.claimStep(max);
      const input = {
        queues: [...new Set(queues)],
        max,
        gates: options.gates ?? [],
        capMs: leaseCap(options.lockDurationMs),
        maxBytes: options.maxBytes,
        step,
      };
      const waitMs = claim.waitTime(options.waitMs);
      const signal = options.signal;
      const verb = (w: WriteScope, limit: number) =>
        claim.receiveAny(w, limit < input.max ? { ...input, max: limit } : input);
      // One queue without gates is a plain claim: one statement.
      const oneStatement = input.queues.length === 1 && input.gates.length === 0;
      return longPoll(this.clock, this.waiters, {
        keys: input.queues,
        waitMs,
        signal,
        claim: () =>
          this.queueWrite((w) => verb(w, max), {
            oneStatement: oneStatement && !step,
            long: step !== undefined,
            signal,
          }),
        take: waitMs > 0 ? this.handOff(verb) : undefined,
        plain:
          waitMs > 0 && oneStatement
            ? { max: input.max, capMs: input.capMs, name: input.queues[0]!, maxBytes: input.maxBytes }
            : undefined,
      });
    });
  }

  receiveDeferred(
    queue: string,
    seqNumbers: number[],
    options: ReceiveDeferredOptions = {},
  ): Promise<Message[]> {
    return this.guard(() => {
      const seqs = seqNumbers.map(seqNumber);
      const maxBytes = answerBytes(options.maxBytes);
      const step = this.claimStep(seqs.length);
      return this.queueWrite((w) => claim.receiveDeferred(w, queue, seqs, maxBytes, step), {
        long: step !== undefined,
      });
    });
  }

  peek(queue: string, options: PeekOptions = {}): Promise<Message[]> {
    return this.guard(() => {
      const max = clampCount(options.max, claim.DEFAULT_PEEK, claim.MAX_PEEK);
      const from = integer(options.fromSeq, "from_seq");
      const state = options.state;
      if (state && !MESSAGE_STATES.includes(state)) return Promise.resolve([]);
      const maxBytes = answerBytes(options.maxBytes);
      return this.dialect.read(() => claim.peek(queue, state, from, max, maxBytes), { sliced: true });
    });
  }

  // (end of claim)

  // --- send: send, schedule, cancel, publish, sendFlow, sendDebounced: insertion, fan-out, dedup ---

  /** The largest message body a send accepts, in bytes. */
  protected abstract readonly maxMessageBytes: number;

  send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<number[]> {
    return this.guard(() => {
      const at = send.sendAt(options);
      // A long send is prepared in slices, as it is then written (see `LONG_WRITE_ITEMS`).
      if (Array.isArray(messages) && messages.length >= LONG_WRITE_ITEMS) {
        return prepareMessagesInSlices(messages, this.maxMessageBytes).then((prepared) =>
          this.sendPrepared(queue, prepared, at),
        );
      }
      const prepared = prepareMessages(messages, this.maxMessageBytes);
      if (prepared.length === 0) return Promise.resolve([]);
      return this.sendPrepared(queue, prepared, at);
    });
  }

  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options: Omit<SendOptions, "scheduledAt"> = {},
  ): Promise<number[]> {
    return this.send(queue, messages, { ...options, scheduledAt });
  }

  publish(topic: string, message: OutgoingMessage, options: SendOptions = {}): Promise<PublishResult> {
    return this.guard(() => {
      requireName(topic, "topic");
      const at = send.sendAt(options);
      if (Array.isArray(message)) throw new InvalidArgumentError("mqlite: publish takes one message");
      const prepared = prepareMessages(message, this.maxMessageBytes);
      return this.sendWrite((w) => publishOne(w, topic, prepared, at));
    });
  }

  cancel(queue: string, seq: number): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.queueWrite((w) => send.cancel(w, queue, s), { oneStatement: true });
    });
  }

  sendDebounced(queue: string, message: OutgoingMessage, options: DebounceOptions): Promise<DebouncedSend> {
    return this.guard(() => {
      const d = checkDebounce(options);
      const m = { ...prepareMessages(message, this.maxMessageBytes)[0]!, delayMs: 0, uniqueKey: null };
      return this.queueWrite((w) => sendDebounced(w, queue, m, d));
    });
  }

  /**
   * Runs a validated send. A plain send (see `plainSend`) to a queue whose row the dialect has
   * cached goes the short way (`sendFreshTo`): one statement, and the messages a parked receiver's
   * claim would take stored locked for it. A long send, or a cached row found stale, goes the long
   * way: the queue looked up in the transaction, a parked receiver claiming for itself.
   */
  protected sendPrepared(queue: string, prepared: PreparedMessage[], at: send.SendAt): Promise<number[]> {
    const long = prepared.length >= LONG_WRITE_ITEMS;
    const cached = long ? undefined : this.cachedQueue(queue);
    const theLongWay = () => this.sendWrite((w) => seqsOf(w, queue, prepared, at), long);
    if (!cached || !plainSend(cached, prepared)) return theLongWay();
    return this.sendFreshTo(cached, prepared, at).then((seqs) => {
      if (seqs) return seqs;
      this.forgetQueue(queue);
      return theLongWay();
    });
  }

  /**
   * The dialect's cached row of `queue` (no lookup), for a send that may go the short way. A
   * dialect's `SendOps.insertFresh` stores nothing when the row is no longer current.
   */
  protected abstract cachedQueue(queue: string): QueueRow | undefined;

  /** Drops the cached row of `queue` (it was found stale). */
  protected abstract forgetQueue(queue: string): void;

  /**
   * A plain send (see `plainSend`) to a queue of a cached row, as one statement (`sendFresh`): when
   * a receiver is parked on the queue in this process, the messages its claim would take are stored
   * locked for it, and it gets them once the statement committed, without a claim (one round trip
   * instead of two). A send made while the previous one to the queue still waits for its write
   * joins that write (see `SendBatches`). The seqs; undefined when the cached row was stale
   * (nothing stored).
   */
  protected sendFreshTo(
    q: QueueRow,
    prepared: PreparedMessage[],
    at: send.SendAt,
  ): Promise<number[] | undefined> {
    return (
      this.sendBatches.join(q, prepared, at) ??
      this.sendBatches.start(q, prepared, at, (batch) => this.writeBatch(batch))
    );
  }

  /** Writes a batch of plain sends (see `sendFreshTo`) as one statement, and sets its ids. */
  private async writeBatch(batch: SendBatch): Promise<void> {
    const { queue: q, at } = batch;
    let held: Held<Message> | undefined;
    // Held at most once however often the write runs its verb (a retry).
    const receiver = () => {
      held ??= this.waiters.hold(q.name);
      return held?.claim;
    };
    let handed: Message[] | undefined;
    try {
      // Not `queueWrite`: the batch's own write leaves it open for the sends that follow.
      const out = await this.dialect.write(
        (w) => {
          this.sendBatches.begin(batch);
          return send.sendFresh(w, q, batch.messages, at, receiver);
        },
        { oneStatement: true },
      );
      handed = out?.handed;
      batch.ids = out?.ids;
    } finally {
      this.sendBatches.begin(batch);
      held?.release(handed);
    }
  }

  /**
   * Queues a write verb. Any write closes the open send batch (see `SendBatches`): a send made
   * after it must not be stored before it.
   */
  protected queueWrite<T>(verb: (w: WriteScope) => Verb<T>, options?: WriteOptions): Promise<T> {
    this.sendBatches.close();
    return this.dialect.write(verb, options);
  }

  /**
   * Queues a dialect's own write for the caller (its `tx`, the application's SQL beside sends): it
   * closes the open send batch as a verb's write does (see `queueWrite`).
   */
  protected queueOwnWrite<T>(write: () => Promise<T>): Promise<T> {
    this.sendBatches.close();
    return write();
  }

  /** Runs a send or publish in a write (a dialect may retry one that met a stale view). */
  protected sendWrite<T>(verb: (w: WriteScope) => Verb<T>, long = false): Promise<T> {
    return this.queueWrite(verb, long ? { long } : undefined);
  }

  /** Sends a flow: its jobs, with parents held until their children settle (see `verbs/dependencies.ts`). */
  sendFlow(nodes: FlowNode[]): Promise<number[]> {
    return this.guard(() => {
      const prepared = prepareFlow(nodes, this.maxMessageBytes);
      return this.queueWrite((w) => dependencies.sendFlow(w, prepared));
    });
  }

  /**
   * Releases the parents of these settled children (or, without a list, of every settled child
   * whose dependency is still open: the sweep, which finds them with a read so that an idle sweep
   * writes nothing).
   */
  async releaseDependents(seqNumbers?: number[]): Promise<number> {
    let children: number[];
    if (seqNumbers !== undefined) {
      if (!Array.isArray(seqNumbers)) throw new InvalidArgumentError("mqlite: seq_numbers must be a list");
      children = seqNumbers.map(seqNumber);
    } else {
      children = await this.dialect.read(() => dependencies.settledChildren());
    }
    if (children.length === 0) return 0;
    return this.queueWrite((w) => dependencies.releaseDependents(w, children));
  }

  dependencies(seq: number): Promise<Dependency[]> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.read(() => dependencies.dependencies(s));
    });
  }

  // (end of send)

  // --- queues: queues and subscriptions: create, delete, list, stats, pause, subscribe, filters, reaping ---

  createQueue(name: string, config?: QueueConfig): Promise<void> {
    return this.guard(() => {
      requireName(name, "queue");
      const normalized = normalizeQueueConfig(config);
      return this.queueWrite((w) => queues.createQueue(w, name, normalized));
    });
  }

  deleteQueue(name: string): Promise<void> {
    // Long: a queue of many messages is deleted in steps (see `dropQueueInSteps`).
    return this.queueWrite(() => queues.deleteQueue(name), { long: true });
  }

  listQueues(): Promise<QueueInfo[]> {
    return this.dialect.read(() => queues.listQueues());
  }

  stats(queue: string): Promise<QueueStats> {
    return this.dialect.read((now) => queues.stats(now, queue));
  }

  pauseQueue(name: string): Promise<void> {
    return this.queueWrite((w) => queues.setQueuePaused(w, name, true), { oneStatement: true });
  }

  resumeQueue(name: string): Promise<void> {
    return this.queueWrite((w) => queues.setQueuePaused(w, name, false), { oneStatement: true });
  }

  subscribe(topic: string, name: string, options: SubscribeOptions = {}): Promise<void> {
    return this.guard(() => {
      requireName(topic, "topic");
      requireName(name, "subscription");
      if (topic === name)
        throw new NameConflictError("mqlite: a subscription cannot be named after its topic");
      const filter = subscriptionFilter(options.filter);
      // A backing queue is always of the subscription kind, whatever the caller's config says.
      const { kind: _ignored, ...config } = (options.config ?? {}) as QueueConfig;
      return this.queueWrite((w) =>
        subscriptions.subscribe(w, topic, name, filter, options.config ? config : undefined),
      );
    });
  }

  unsubscribe(topic: string, name: string): Promise<void> {
    // Long: a backing queue of many messages is deleted in steps (see `dropQueueInSteps`).
    return this.queueWrite(() => subscriptions.unsubscribe(topic, name), { long: true });
  }

  pauseSubscription(topic: string, name: string): Promise<void> {
    return this.queueWrite((w) => subscriptions.setSubscriptionPaused(w, topic, name, true), {
      oneStatement: true,
    });
  }

  resumeSubscription(topic: string, name: string): Promise<void> {
    return this.queueWrite((w) => subscriptions.setSubscriptionPaused(w, topic, name, false), {
      oneStatement: true,
    });
  }

  listSubscriptions(): Promise<SubscriptionInfo[]> {
    return this.dialect.read(() => subscriptions.listSubscriptions());
  }

  testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult> {
    const maxBytes = this.maxMessageBytes;
    // Storage has no part in it: a read only for the broker's time and its closed check.
    // biome-ignore lint/correctness/useYield: a verb without statements
    return this.dialect.read(function* (now) {
      return testFilter(filter, sample, now, maxBytes);
    });
  }

  subscribeTask(topic: string, name: string, options: TaskSubscribeOptions): Promise<void> {
    return this.guard(() => {
      requireName(topic, "topic");
      requireName(name, "subscription");
      const spec = taskSpec(options, requireName, integer);
      if (spec.filter) checkFilter(spec.filter);
      if (spec.queue === topic)
        throw new NameConflictError("mqlite: a topic cannot deliver to a queue of its own name");
      return this.queueWrite((w) => subscriptions.subscribeTask(w, topic, name, spec));
    });
  }

  subscribeLog(topic: string, name: string, options: LogSubscribeOptions = {}): Promise<void> {
    return this.guard(() => {
      requireName(topic, "topic");
      requireName(name, "subscription");
      const filter = subscriptionFilter(options.filter);
      return this.queueWrite((w) => subscriptions.subscribeLog(w, topic, name, filter));
    });
  }

  topicStats(topic?: string): Promise<TopicBacklog[]> {
    return this.dialect.read(() => subscriptions.topicStats(topic));
  }

  reapSubscriptions(options: ReapOptions = {}): Promise<number> {
    const liveness = options.livenessMs ?? EPHEMERAL_LIVENESS_MS;
    const grace = options.graceMs ?? EPHEMERAL_GRACE_MS;
    return this.queueWrite((w) => subscriptions.reapSubscriptions(w, liveness, grace), {
      oneStatement: true,
    });
  }

  // (end of queues)

  // --- topics: declared and log topics: declare, read, ack, lease, nack, stats ---

  declareTopic(name: string, options: DeclareTopicOptions = {}): Promise<void> {
    return this.guard(() => {
      requireName(name, "topic");
      const retention =
        options.retentionMs === undefined || options.retentionMs === null
          ? null
          : nonNegativeDuration(options.retentionMs, "retention_ms");
      return this.queueWrite((w) => topics.declareTopic(w, name, retention));
    });
  }

  listDeclaredTopics(): Promise<EngineDeclaredTopic[]> {
    return this.dialect.read(() => topics.listDeclaredTopics());
  }

  readTopic(topic: string, name: string, options: ReadTopicOptions = {}): Promise<TopicLogMessage[]> {
    return this.guard(() => {
      const limit = topics.topicLimit(options.limit);
      const maxBytes = answerBytes(options.maxBytes);
      return this.dialect.read((now) => topics.readTopic(now, topic, name, limit, maxBytes));
    });
  }

  ackTopic(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.queueWrite((w) => topics.ackTopic(w, ref), { oneStatement: true });
    });
  }

  leaseTopic(topic: string, name: string, options: LeaseTopicOptions = {}): Promise<TopicLogMessage[]> {
    return this.guard(() => {
      const visibility =
        options.visibilityMs === undefined
          ? DEFAULT_VISIBILITY_MS
          : nonNegativeDuration(options.visibilityMs, "visibility_ms");
      const limit = topics.topicLimit(options.limit);
      const maxBytes = answerBytes(options.maxBytes);
      return this.queueWrite((w) => topics.leaseTopic(w, topic, name, limit, visibility, maxBytes));
    });
  }

  ackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.queueWrite((w) => topics.ackMessage(w, ref), { oneStatement: true });
    });
  }

  nackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.queueWrite((w) => topics.nackMessage(w, ref), { oneStatement: true });
    });
  }

  topicLogStats(topic?: string): Promise<EngineTopicLogStat[]> {
    return this.dialect.read((now) => topics.topicLogStats(now, topic));
  }

  // (end of topics)

  // --- maintenance: the dead-letter queue and upkeep: redrive, purge, the background steps, retention ---

  /** The broker-wide DLQ retention bounds queues inherit. */
  protected abstract readonly dlqBounds: DlqBounds;
  /** The earliest scheduled delivery the scheduler's last pass saw (its next wake-up). */
  private nextDue: number | undefined;
  /** The earliest lease end the reaper's last pass saw (its next wake-up). */
  private nextLease: number | undefined;

  async redrive(queue: string, options: RedriveOptions = {}): Promise<number> {
    const max = nonNegative(options.max, "max");
    const olderThanMs = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    const rate = nonNegative(options.ratePerSec, "rate_per_sec");
    const target = options.target && options.target !== queue ? options.target : undefined;
    const only = options.seqNumbers;
    const moveChunk = (limit: number) =>
      this.queueWrite((w) => deadLetters.redrive(w, queue, { max: limit, olderThanMs, only, target }));
    if (rate === 0) return moveChunk(max);
    // Rate-limited: a chunk of `rate` per second, each its own transaction.
    let total = 0;
    for (;;) {
      const want = max > 0 ? Math.min(rate, max - total) : rate;
      if (want <= 0) return total;
      const moved = await moveChunk(want);
      total += moved;
      if (moved < want) return total;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  purge(queue: string, options: PurgeOptions = {}): Promise<number> {
    return this.guard(() => {
      const max = nonNegative(options.max, "max");
      const olderThanMs = nonNegativeDuration(options.olderThanMs, "older_than_ms");
      return this.queueWrite((w) => deadLetters.purge(w, queue, max, olderThanMs));
    });
  }

  /**
   * Runs every background step once, now (whether or not this node runs the loops): reaper,
   * scheduler, TTL sweep, janitors, DLQ retention. For tests with a manual clock and the loops
   * switched off.
   */
  async runMaintenanceOnce(): Promise<MaintenanceResult> {
    const out = emptyResult();
    for (const step of ["reap", "schedule", "expire", "janitor", "retention"] as const) {
      mergeResult(out, await this.runMaintenanceStep(step));
    }
    return out;
  }

  /** Runs one background step in its own transaction; the scheduler and reaper note their next due time. */
  protected async runMaintenanceStep(step: MaintenanceStep): Promise<MaintenanceResult> {
    const { result, next } = await this.queueWrite((w) => maintenance.runStep(w, step, this.dlqBounds));
    if (step === "reap") this.nextLease = next;
    else if (step === "schedule") this.nextDue = next;
    return result;
  }

  /** The background loops over this broker's steps (the dialect decides when they run). */
  protected maintenanceLoops(deps: { clock: Clock; logger: Logger; reclaim?: () => void }): Loops {
    return new Loops({
      ...deps,
      run: (step) => this.runMaintenanceStep(step),
      nextScheduled: () => this.nextDue,
      nextLeaseEnd: () => this.nextLease,
    });
  }

  // (end of maintenance)

  // --- records: job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks ---

  /**
   * Wake-ups of `awaitSettled`, keyed by sequence number: the broker notifies them after its
   * commits that settle messages (its `Effects.settled`), and as its connection sees fit.
   */
  protected abstract readonly settledWaiters: Waiters;
  /** `awaitSettled` re-checks at least this often (settlements its waiters never hear of). */
  protected readonly settledRecheckMs: number | undefined = undefined;

  cancelMessage(queue: string, seq: number, options: CancelMessageOptions = {}): Promise<CancelOutcome> {
    return this.guard(() => {
      const retain = nonNegativeDuration(options.retainMs, "retain_ms");
      const s = seqNumber(seq);
      return this.queueWrite((w) => records.cancelMessage(w, queue, s, options.lockToken, retain));
    });
  }

  setProgress(queue: string, seq: number, lockToken: string, progress: number): Promise<void> {
    return this.guard(() => {
      const p = progressValue(progress);
      const s = seqNumber(seq);
      return this.queueWrite((w) => records.setProgress(w, queue, s, lockToken, p), {
        oneStatement: true,
      });
    });
  }

  getMessages(seqNumbers: number[]): Promise<MessageRecord[]> {
    return this.guard(() => {
      const seqs = seqNumbers.map(seqNumber);
      return this.dialect.read(() => records.getMessages(seqs));
    });
  }

  browse(options: BrowseOptions = {}): Promise<MessageRecord[]> {
    return this.guard(() => {
      const q = browseQuery(options);
      return this.dialect.read(() => records.browse(q));
    });
  }

  messageErrors(seq: number): Promise<AttemptError[]> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.read(() => records.messageErrors(s));
    });
  }

  awaitSettled(
    seqNumbers: number[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<number[]> {
    return this.guard(() => {
      const seqs = seqNumbers.map(seqNumber);
      const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
      return awaitSettled(
        this.clock,
        this.settledWaiters,
        () => this.dialect.read(() => records.settledOf(seqs)),
        seqs,
        wait,
        options.signal,
        this.settledRecheckMs,
      );
    });
  }

  deleteSettled(queue: string, options: DeleteSettledOptions = {}): Promise<number> {
    return this.guard(async () => {
      const q = deleteSettledQuery(options);
      if (!this.dialect.stepsHoldTheLoop) {
        return (await this.queueWrite((w) => records.deleteSettled(w, queue, q, { step: DELETE_STEP_ROWS })))
          .deleted;
      }
      // Where statements hold the event loop, 50,000 rows deleted in one statement held it for
      // 400 ms. A first step goes with the other writes: a retention sweep mostly finds a few rows
      // (and, keeping by count, no more keys to read for its mark than one step). What it leaves
      // is a long write: keys read `MARK_STEP_ROWS` a statement, rows deleted `STEP_ITEMS`.
      const steps = { step: STEP_ITEMS, markStep: MARK_STEP_ROWS };
      const first = await this.queueWrite((w) =>
        records.deleteSettled(w, queue, q, { ...steps, most: STEP_ITEMS, markMost: MARK_STEP_ROWS }),
      );
      if (!first.more) return first.deleted;
      const rest = await this.queueWrite((w) => records.deleteSettled(w, queue, q, steps), { long: true });
      return first.deleted + rest.deleted;
    });
  }

  promoteMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return this.guard(() => {
      const seqs = seqNumberList(seqNumbers);
      return this.queueWrite((w) => records.promoteMessages(w, queue, seqs), { oneStatement: true });
    });
  }

  removeMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return this.guard(() => {
      const seqs = seqNumberList(seqNumbers);
      return this.queueWrite((w) => records.removeMessages(w, queue, seqs), { oneStatement: true });
    });
  }

  heartbeat(worker: WorkerInfo, options: { staleAfterMs?: number } = {}): Promise<HeartbeatResult> {
    return this.guard(() => {
      requireName(worker?.workerId, "worker");
      const stale =
        options.staleAfterMs && options.staleAfterMs > 0 ? options.staleAfterMs : DEFAULT_WORKER_STALE_MS;
      return this.queueWrite((w) => workers.heartbeat(w, worker, stale));
    });
  }

  listWorkers(): Promise<WorkerRecord[]> {
    return this.dialect.read(() => workers.listWorkers());
  }

  removeWorker(workerId: string): Promise<boolean> {
    return this.queueWrite(() => workers.removeWorker(workerId), { oneStatement: true });
  }

  acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.guard(() => {
      requireName(name, "lock");
      requireName(owner, "lock owner");
      if (nonNegativeDuration(ttlMs, "ttl_ms") === 0)
        throw new InvalidArgumentError("mqlite: ttl_ms must be positive");
      return this.queueWrite((w) => namedLocks.acquireLock(w, name, owner, ttlMs), { oneStatement: true });
    });
  }

  releaseLock(name: string, owner: string): Promise<boolean> {
    return this.queueWrite((w) => namedLocks.releaseLock(w, name, owner), { oneStatement: true });
  }

  // (end of records)

  // --- flows: flows, job logs, events and metrics: dependencies, message logs, the event log, per-minute metrics ---

  appendMessageLog(queue: string, seq: number, lockToken: string, lines: string[]): Promise<number> {
    return this.guard(() => {
      checkLogLines(lines);
      const s = seqNumber(seq);
      return this.queueWrite((w) => flows.appendMessageLog(w, queue, s, lockToken, lines));
    });
  }

  messageLog(seq: number, options?: { offset?: number; limit?: number }): Promise<MessageLogPage> {
    return this.guard(() => {
      const s = seqNumber(seq);
      const { offset, limit } = logPage(options);
      return this.dialect.read(() => flows.messageLog(s, offset, limit));
    });
  }

  appendEvents(events: EventInput[]): Promise<void> {
    return this.guard(() => {
      checkEvents(events);
      if (events.length === 0) return Promise.resolve();
      return this.queueWrite((w) => flows.appendEvents(w, events), { oneStatement: true });
    });
  }

  readEvents(afterId: number, options: { limit?: number } = {}): Promise<EventPage> {
    return this.guard(() => {
      const after = integer(afterId, "after_id");
      const limit = eventLimit(options.limit);
      return this.dialect.read(() => flows.readEvents(after, limit));
    });
  }

  addMetrics(increments: MetricIncrement[]): Promise<void> {
    return this.guard(() => {
      const merged = checkIncrements(increments);
      if (merged.length === 0) return Promise.resolve();
      return this.queueWrite((w) => flows.addMetrics(w, merged), { oneStatement: true });
    });
  }

  /** The query's defaults and bounds depend on the read's time: checked in the read. */
  readMetrics(kind: MetricKind, query?: MetricsQuery): Promise<MetricPoint[]> {
    return this.guard(() => {
      const k = metricKind(kind);
      return this.dialect.read((now) => flows.readMetrics(k, query, now));
    });
  }

  // (end of flows)

  // --- the broker's life ---

  /** Set once `close` began: the dialect refuses every later call with `ClosedError`. */
  protected closing: Promise<void> | undefined;
  /** The background loops (see `maintenanceLoops`). */
  protected abstract readonly loops: Loops;

  /**
   * Closes the broker, once: the loops stop, parked long-polls and `awaitSettled` calls end with
   * `ClosedError`, then the dialect closes its storage (`closeStorage`).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.loops.stop();
      this.waiters.close();
      this.settledWaiters.close();
      await this.closeStorage();
    })();
    return this.closing;
  }

  /** Closes the dialect's storage after the loops and waiters stopped (writes in flight finish first). */
  protected abstract closeStorage(): Promise<void>;

  /** Whether the broker can take writes: not while closing, else as the dialect's storage says. */
  readiness(): Promise<Readiness> {
    if (this.closing)
      return Promise.resolve({ ready: false, reason: "closing", message: "mqlite: broker is closed" });
    return this.storageReadiness();
  }

  /** The dialect's own readiness (file or database reachable, storage not full). */
  protected abstract storageReadiness(): Promise<Readiness>;

  /** Wakes `awaitSettled` for these messages once the transaction `tx` commits. */
  protected settleAfterCommit(tx: { afterCommit(fn: () => void): void }, seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    tx.afterCommit(() => {
      for (const s of seqs) this.settledWaiters.notify(String(s));
    });
  }

  /** The consumer loop (one implementation for every broker: contract/consume.ts). */
  consume(queue: string, handler: ConsumeHandler, options?: ConsumeOptions): Consumer {
    return consume(this, queue, handler, options);
  }

  /** Runs `fn`, turning a synchronous throw (refused input) into a rejected promise. */
  protected guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return fn();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** Validates `complete`'s options: what to keep, if anything. */
export function keepOptions(options: CompleteOptions | undefined): settle.KeepOptions | undefined {
  const retainMs = nonNegativeDuration(options?.retainMs, "retain_ms");
  if (retainMs === 0) return undefined;
  const r = options?.result;
  const result = r === undefined || r === null ? null : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
  return { retainMs, result };
}

/** A subscription's filter: blank matches everything; anything else must compile. */
function subscriptionFilter(source: string | undefined): string {
  const filter = (source ?? "").trim() === "" ? "" : (source as string);
  if (filter) checkFilter(filter);
  return filter;
}

function* seqsOf(w: WriteScope, queue: string, prepared: PreparedMessage[], at: send.SendAt): Verb<number[]> {
  return (yield* send.send(w, queue, prepared, at)).seqs;
}

function* publishOne(
  w: WriteScope,
  topic: string,
  prepared: PreparedMessage[],
  at: send.SendAt,
): Verb<PublishResult> {
  return (yield* send.send(w, topic, prepared, at, true)).published[0]!;
}
