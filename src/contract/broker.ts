import type { ConsumeHandler, ConsumeOptions, Consumer } from "./consume.js";
import type { JobService } from "./job-service.js";
import type { TopicService } from "./topic-service.js";
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
} from "./types.js";

/**
 * The one contract every mqlite implementation honours: the embedded SQLite engine, the remote
 * client of a served broker, and (later) the PostgreSQL engine. One conformance suite is run
 * against each.
 *
 * Every method is async and fails with the named errors of `errors.ts`. The job face's capabilities
 * (`JobService`, `TopicService`) are part of it, so jobs and job topics run on any implementation.
 */
export interface Broker extends JobService, TopicService {
  // --- queues -------------------------------------------------------------------------------
  /** Creates a queue, or replaces the whole config of an existing queue of the same kind. */
  createQueue(name: string, config?: QueueConfig): Promise<void>;
  /** Deletes a plain queue and its messages. Refuses a subscription's backing queue. */
  deleteQueue(name: string): Promise<void>;
  /** Every queue, subscription backing queues included, ordered by name. */
  listQueues(): Promise<QueueInfo[]>;
  /** Counts by state. */
  stats(queue: string): Promise<QueueStats>;

  // --- sending ------------------------------------------------------------------------------
  /**
   * Sends to a queue, or publishes to a topic (a name with subscriptions fans out to each matching
   * subscription's backing queue). One transaction per call. Returns one sequence number per
   * message: 0 when no subscription accepted it, or (in a multi-message call) on a dedup conflict.
   */
  send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options?: SendOptions,
  ): Promise<number[]>;
  /** `send` with a delivery time in the future. */
  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options?: Omit<SendOptions, "scheduledAt">,
  ): Promise<number[]>;
  /** Deletes a scheduled message that was never delivered. */
  cancel(queue: string, seqNumber: number): Promise<void>;

  // --- receiving and settling -----------------------------------------------------------------
  /** Claims up to `maxMessages` messages, long-polling up to `waitMs` when none is claimable. */
  receive(queue: string, options?: ReceiveOptions): Promise<Message[]>;
  /** Claims deferred messages by sequence number (others are skipped). */
  receiveDeferred(queue: string, seqNumbers: number[], options?: ReceiveDeferredOptions): Promise<Message[]>;
  /** Deletes a locked message (settles it as done), or keeps it as `completed` with `options.retainMs`. */
  complete(queue: string, seqNumber: number, lockToken: string, options?: CompleteOptions): Promise<void>;
  /** Completes many; each item succeeds or fails on its own. */
  completeBatch(queue: string, items: CompleteItem[]): Promise<CompleteResult[]>;
  /** Releases the lock for redelivery (or dead-letters at the delivery limit). */
  abandon(queue: string, seqNumber: number, lockToken: string, options?: AbandonOptions): Promise<void>;
  /** Dead-letters the message. */
  reject(queue: string, seqNumber: number, lockToken: string, options?: RejectOptions): Promise<void>;
  /** Sets the message aside; only `receiveDeferred` fetches it again. */
  defer(queue: string, seqNumber: number, lockToken: string): Promise<void>;
  /** Extends the lease by the queue's lock duration (never shortens it). */
  renew(queue: string, seqNumber: number, lockToken: string): Promise<void>;
  /** Renews up to 512 locks (each lease capped by `options.lockDurationMs` when given). */
  renewBatch(queue: string, items: LockRef[], options?: RenewBatchOptions): Promise<RenewResult[]>;
  /**
   * Runs `handler` for each message of `queue` (the consumer loop, see `consume`): completes on
   * success, abandons on a throw (rejects on a `DeadLetterError`), renews running handlers' leases,
   * backs off while receives fail. `stop()` (or `options.signal`) lets running handlers finish and
   * releases prefetched messages.
   */
  consume(queue: string, handler: ConsumeHandler, options?: ConsumeOptions): Consumer;

  // --- inspecting and the dead-letter queue -----------------------------------------------------
  /** Reads messages without locking them, in sequence order. */
  peek(queue: string, options?: PeekOptions): Promise<Message[]>;
  /** Moves dead letters back to active (in place or into another queue). Returns how many moved. */
  redrive(queue: string, options?: RedriveOptions): Promise<number>;
  /** Deletes dead letters. Returns how many. */
  purge(queue: string, options?: PurgeOptions): Promise<number>;

  // --- topics ---------------------------------------------------------------------------------
  /** Subscribes `name` (which becomes a backing queue) to `topic`, with an optional filter. */
  subscribe(topic: string, name: string, options?: SubscribeOptions): Promise<void>;
  /**
   * Removes a subscription of any kind: a queue subscription with its backing queue and messages, a
   * log subscription with its leases (the topic's log goes too once it has no log subscription and is
   * not declared). A task subscription's jobs stay in their queue.
   */
  unsubscribe(topic: string, name: string): Promise<void>;
  /** A paused subscription receives no copies until resumed. */
  pauseSubscription(topic: string, name: string): Promise<void>;
  resumeSubscription(topic: string, name: string): Promise<void>;
  /** Every subscription of every kind (queue, task, log), ordered by topic then name. */
  listSubscriptions(): Promise<SubscriptionInfo[]>;
  /** Compiles a filter and optionally runs it against a sample message. Stores nothing. */
  testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult>;

  // --- the broker -----------------------------------------------------------------------------
  status(): Promise<BrokerStatus>;
  /**
   * Whether writes can be taken now (a full disk, a lock held elsewhere, closing), without writing.
   * Optional: a broker without it is ready while `status()` answers.
   */
  readiness?(): Promise<Readiness>;
  /** Stops admitting work, wakes long-polls, waits for work in flight, and releases the store. */
  close(): Promise<void>;
}
