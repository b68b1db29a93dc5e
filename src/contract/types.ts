import type { SubscriptionDetails } from "./topic-service.js";

/**
 * The public data types of the `Broker` contract. Times are epoch milliseconds (UTC) and durations
 * are milliseconds; names are camelCase here and snake_case on the wire.
 */

/** How a queue orders delivery. See docs/concepts.md. */
export type OrderingMode = "standard" | "group_fifo" | "strict_fifo";

/** A plain queue, or the backing queue of a topic subscription. */
export type QueueKind = "queue" | "subscription";

/** The state of a stored message. */
export type MessageState =
  | "active"
  | "locked"
  | "deferred"
  | "scheduled"
  | "completed"
  | "cancelled"
  | "dead_lettered";

/** Every state a message can be in, in the order stats and tables show them. */
export const MESSAGE_STATES: readonly MessageState[] = [
  "active",
  "locked",
  "deferred",
  "scheduled",
  "completed",
  "cancelled",
  "dead_lettered",
];

/** The final states: a message in one of them is never delivered again (until a redrive). */
export const SETTLED_STATES: readonly MessageState[] = ["completed", "cancelled", "dead_lettered"];

/**
 * A queue's configuration. Every field is optional; an omitted field takes its default, and a
 * repeated `createQueue` resets omitted fields to their defaults (it is an upsert of the whole config).
 */
export interface QueueConfig {
  /** `"queue"` (default) or `"subscription"`; only a same-kind upsert is allowed. */
  kind?: QueueKind;
  /** Peek-lock lease; `renew` extends the lock by this much. ≤0 → 30000. */
  lockDurationMs?: number;
  /** Dead-letter once `deliveryCount >= maxDeliveryCount`. ≤0 → 10. */
  maxDeliveryCount?: number;
  /** TTL of messages sent without one, and a ceiling on a per-message TTL. 0 = unlimited. */
  defaultTtlMs?: number;
  /** On TTL expiry: dead-letter with reason `TTLExpired` (true, default) or delete (false). */
  deadLetterOnExpire?: boolean;
  /** Duplicate-detection window keyed by message id (or the body's SHA-256). 0 = off. */
  dedupWindowMs?: number;
  /** `standard` (default), `group_fifo` or `strict_fifo`. */
  orderingMode?: OrderingMode;
  /** DLQ retention by age: 0 inherits the broker default, >0 is this queue's bound, <0 unbounded. */
  dlqMaxAgeMs?: number;
  /** Keep at most this many dead letters (oldest dropped). 0 inherit, >0 own, <0 unbounded. */
  dlqMaxCount?: number;
  /** Cap on the dead letters' total body bytes (oldest dropped). 0 inherit, >0 own, <0 unbounded. */
  dlqMaxBytes?: number;
}

/** A queue with its whole (normalised) configuration, as `listQueues` reports it. */
export interface QueueInfo extends Required<QueueConfig> {
  name: string;
  /** Our extension: present (true) while the queue is paused (`pauseQueue`). */
  paused?: boolean;
}

/** A message to send. Only these fields are stored. */
export interface OutgoingMessage {
  /** The payload; a string is stored as its UTF-8 bytes. Absent means an empty body. */
  body?: Uint8Array | string;
  /** Application id; also the deduplication key when the queue has a dedup window. */
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  /** Ordering group: same-group messages are delivered in order, one in flight at a time. */
  groupId?: string;
  contentType?: string;
  /** A dotted label (`orders.eu.created`) that filters can split into `subject_parts`. */
  subject?: string;
  /** String-valued application properties. */
  properties?: Record<string, string>;
  /** Our extension: higher is claimed first, within what the queue's ordering allows. Default 0. */
  priority?: number;
  /** Our extension: this message's own delivery limit (overrides the queue's `maxDeliveryCount`). */
  maxDeliveryCount?: number;
  /** Our extension: this message's own lease (overrides the queue's `lockDurationMs`, for claims and renewals). */
  lockDurationMs?: number;
  /**
   * Our extension: while a message with this key is live (active, locked, deferred or scheduled) in
   * the queue, sending another returns the live one's sequence number instead of storing a copy.
   */
  uniqueKey?: string;
  /** Our extension: deliver no earlier than `delayMs` after the send (combines with `scheduledAt`: the later wins). */
  delayMs?: number;
}

/** Options of a `send` (they apply to every message of the call). */
export interface SendOptions {
  /** Deliver no earlier than this instant (epoch ms); must be in the future. 0/absent = now. */
  scheduledAt?: number;
  /** Time to live, anchored at the delivery time. 0/absent = the queue's default. */
  ttlMs?: number;
}

/**
 * A stored message as `receive`, `receiveDeferred` and `peek` return it. Optional fields are absent
 * when empty (as on the wire).
 */
export interface Message {
  /** The message's sequence number: unique across the whole database, never reused. */
  seqNumber: number;
  body: Buffer;
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  groupId?: string;
  contentType?: string;
  subject?: string;
  properties?: Record<string, string>;
  /** When the message was published (epoch ms). */
  enqueuedAt: number;
  /** How many times it has been claimed (1 on the first receive). */
  deliveryCount: number;
  /** The lease's deadline, when locked. */
  lockedUntil?: number;
  /** The lock token that fences settlement (peek-lock receives only; never in `peek`). */
  lockToken?: string;
  /** Our extension: the claim priority, when not 0. */
  priority?: number;
  /** `peek` only: the state. */
  state?: MessageState;
  /** `peek` only: when the message becomes (or became) deliverable. */
  visibleAt?: number;
  /** `peek` only: when its TTL lapses. */
  expiresAt?: number;
  /** `peek` only: why it was dead-lettered. */
  deadLetterReason?: string;
  deadLetterDescription?: string;
  /** Our extension: the message's own delivery limit, when it has one. */
  maxDeliveryCount?: number;
  /** Our extension: the message's own lease, when it has one. */
  lockDurationMs?: number;
  /** Our extension: the queue the message is in (set by `receiveAny` and the record reads). */
  queue?: string;
}

/** How `receive` hands messages over. */
export type ReceiveMode = "peek-lock" | "receive-and-delete";

/**
 * Our extension: a read's own byte budget. The answer stops after the message whose body and
 * properties cross it (one message at least, however large); at most, and by default, 32 MiB. A
 * function is asked when the messages are claimed: a server sizes a long-poll's answer by the
 * memory it has then, not when the poll began. Not positive, or not a number: the default.
 */
export type MaxBytes = number | (() => number);

export interface ReceiveOptions {
  /** 1..256 (≤0 → 1; more is clamped to 256). */
  maxMessages?: number;
  /** Long-poll up to this long when nothing is claimable (clamped to 0..20000). */
  waitMs?: number;
  /** `peek-lock` (default) or `receive-and-delete`. */
  mode?: ReceiveMode;
  /** Retrying a receive with the same id returns the same batch with the same tokens. */
  attemptId?: string;
  /** Abort a long-poll (or drop a receive still waiting for its turn). */
  signal?: AbortSignal;
  /** Our extension: the answer's byte budget (see `MaxBytes`). */
  maxBytes?: MaxBytes;
}

/** Options of `receiveDeferred`. */
export interface ReceiveDeferredOptions {
  /** Our extension: the answer's byte budget (see `MaxBytes`); the messages after it stay deferred. */
  maxBytes?: MaxBytes;
}

/** A message reference for batch settlement. */
export interface LockRef {
  seqNumber: number;
  lockToken: string;
}

/** Options of `renewBatch`. */
export interface RenewBatchOptions {
  /**
   * Our extension: renew each lease for at most this long (ms) instead of the message's own lease or
   * the queue's lock duration, whichever applies. From 1000 ms to ten years; another value is
   * refused with `invalid_argument`. A renewal never shortens a lease.
   */
  lockDurationMs?: number;
}

export interface CompleteResult {
  seqNumber: number;
  ok: boolean;
}

export interface RenewResult {
  seqNumber: number;
  ok: boolean;
  /** The committed lease deadline (only when ok). */
  lockedUntil?: number;
  /** Our extension: present (true) when someone asked to cancel the message (`cancelMessage`). */
  cancelRequested?: boolean;
}

export interface AbandonOptions {
  /** Park the message in `scheduled` for this long before redelivery (backoff). */
  delayMs?: number;
  /** Our extension: recorded in the message's error history as this delivery's error (`messageErrors`). */
  error?: string;
  /**
   * Our extension: `false` gives the delivery back (the delivery count is decremented and the limit
   * is not checked): for a message claimed but never processed, e.g. held back by a rate limit.
   */
  countDelivery?: boolean;
}

/** Our extension: what `complete` keeps of the message. */
export interface CompleteOptions {
  /**
   * Keep the message, in state `completed`, for this long (ms) instead of deleting it; the background
   * sweep deletes it afterwards. 0/absent deletes it at once (the original behaviour).
   */
  retainMs?: number;
  /** The outcome to keep with it (only stored when `retainMs` > 0). */
  result?: Uint8Array;
}

/** A lock reference with what to keep of the message (`completeBatch`). */
export interface CompleteItem extends LockRef, CompleteOptions {}

export interface RejectOptions {
  /** Defaults to `AppRequested`. */
  reason?: string;
  description?: string;
  /** Our extension: recorded in the message's error history as this delivery's error (`messageErrors`). */
  error?: string;
}

export interface PeekOptions {
  /** Inclusive lower bound on the sequence number. */
  fromSeq?: number;
  /** Only messages in this state. */
  state?: MessageState;
  /** 1..1000 (≤0 → 32). */
  max?: number;
  /** Our extension: the answer's byte budget (see `MaxBytes`; a function is asked once). */
  maxBytes?: MaxBytes;
}

export interface QueueStats {
  queue: string;
  active: number;
  locked: number;
  deferred: number;
  scheduled: number;
  deadLettered: number;
  /** Our extension: completed messages kept for their retention time. */
  completed: number;
  /** Our extension: cancelled messages kept for their retention time. */
  cancelled: number;
  /** Our extension: the scheduled messages that were delivered before (waiting out an abandon's delay). */
  backingOff: number;
  total: number;
  /** Age of the oldest active or locked message, 0 when there is none. */
  oldestMessageAgeMs: number;
}

export interface RedriveOptions {
  /** Our extension: only these dead letters (others are skipped). */
  seqNumbers?: number[];
  /** Move into this queue instead of back into the source (fresh seq, enqueuedAt = now). */
  target?: string;
  /** At most this many (0 = all). */
  max?: number;
  /** Only dead letters enqueued more than this long ago (0 = any). */
  olderThanMs?: number;
  /** Move in chunks of this size, one per second (0 = one transaction). */
  ratePerSec?: number;
}

export interface PurgeOptions {
  /** At most this many, oldest first (0 = all). */
  max?: number;
  /** Only dead letters enqueued more than this long ago (0 = any). */
  olderThanMs?: number;
}

/** What a subscription delivers to. `queue` is the broker face; the job face adds `task` and `log`. */
export type SubscriptionKind = "queue" | "task" | "log";

export interface SubscribeOptions {
  /** An expr boolean; empty or absent matches every message. */
  filter?: string;
  /** Configuration of the backing queue when it is created (a re-subscribe keeps the existing one). */
  config?: Omit<QueueConfig, "kind">;
}

export interface SubscriptionInfo extends SubscriptionDetails {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  /** The filter's source; absent means match-all. */
  filter?: string;
  /** A paused subscription receives no copies. */
  paused: boolean;
  createdAt: number;
}

/** A sample message for `testFilter`: the fields a filter can see. */
export interface FilterSample extends OutgoingMessage {
  enqueuedAt?: number;
  visibleAt?: number;
}

export interface TestFilterResult {
  valid: boolean;
  error?: string;
  ran: boolean;
  matched: boolean;
}

/**
 * Why a broker cannot take writes right now (`/readyz`): its storage is full, a lock is held
 * elsewhere (SQLite), the database does not answer in time or refuses writes (PostgreSQL: down,
 * unreachable, or a read-only server such as a standby), or it is closing.
 */
export type NotReadyReason = "storage_full" | "db_locked" | "db_unavailable" | "closing";

/** Whether a broker can take writes: `reason` and `message` say why not. */
export interface Readiness {
  ready: boolean;
  reason?: NotReadyReason;
  message?: string;
}

export interface BrokerStatus {
  version: string;
  backend: "memory" | "local file" | "postgres";
  remote: boolean;
  location: string;
  schemaVersion: string;
  /** The round trip of a `SELECT 1`, in whole milliseconds (truncated); -1 when it failed. */
  pingMs: number;
  dbSizeBytes: number;
  /** Plain queues (subscription backing queues not counted). */
  queues: number;
  subscriptions: number;
  uptimeMs: number;
  auth: boolean;
  /** The durability setting: SQLite's `synchronous` (off, normal, full, extra). Absent when unknown. */
  synchronous?: string;
}
