import type { Message, MessageState, OutgoingMessage, ReceiveOptions } from "./types.js";

/**
 * The engine capabilities the job face is built on, part of every `Broker` (embedded, remote or
 * PostgreSQL). They are generic: a job is a message, and each of these works for any message.
 */

/**
 * A claim gate: holds back messages of one subject while a cap is reached, without delivering them
 * (their delivery count is untouched). Used for per-task concurrency caps and rate limits.
 */
export interface ClaimGate {
  /** The messages it applies to: those whose `subject` is this. */
  subject: string;
  /** At most this many locked messages with this subject, across every queue and every consumer. */
  maxLocked?: number;
  /**
   * A token bucket shared by every consumer, keyed by the subject: at most `limit` claims per
   * `intervalMs`, with bursts of up to `limit`.
   */
  rate?: { limit: number; intervalMs: number };
}

/** Options of `receiveAny`. */
export interface ReceiveAnyOptions extends Omit<ReceiveOptions, "attemptId" | "mode"> {
  /** Claim gates applied to this claim. */
  gates?: ClaimGate[];
  /**
   * Lease each claimed message for at most this long (ms) instead of its own lease or the queue's
   * lock duration, whichever applies. From 1000 ms to ten years; another value is refused with
   * `invalid_argument`. The job face sets it to its `leaseMs`.
   */
  lockDurationMs?: number;
}

/** Options of `cancelMessage`. */
export interface CancelMessageOptions {
  /**
   * The lock token of a locked message: its holder settles it as `cancelled` (fenced like any
   * settlement). Without it, a locked message only gets a cancel request.
   */
  lockToken?: string;
  /** Keep the cancelled message this long (ms) before the background sweep deletes it (0: until the next sweep). */
  retainMs?: number;
}

/**
 * What `cancelMessage` did: `cancelled` (the message will never be delivered again), `requested`
 * (it is locked: its holder sees `cancelRequested` on its next renewal) or `none` (it is already
 * settled, or does not exist).
 */
export type CancelOutcome = "cancelled" | "requested" | "none";

/** A stored message with everything the store knows of it (`getMessages`, `browse`). */
export interface MessageRecord extends Message {
  queue: string;
  state: MessageState;
  /** When the current (or last) delivery was claimed. */
  deliveredAt?: number;
  /** When it reached `completed`, `cancelled` or `dead_lettered`. */
  settledAt?: number;
  /** The outcome kept by `complete` with a retention. */
  result?: Buffer;
  /** 0..100, as last reported by the holder (`setProgress`). */
  progress?: number;
  uniqueKey?: string;
  cancelRequested?: boolean;
  /** How many times it was moved back from the dead-letter queue. */
  redriveCount?: number;
  /** The error of the latest failed delivery (see `messageErrors`). */
  lastError?: string;
}

/** Options of `browse`. */
export interface BrowseOptions {
  /** Only these queues (default: every queue). */
  queues?: string[];
  /** Only these states (default: every state). */
  states?: MessageState[];
  /**
   * `true`: only scheduled messages that were delivered before (backing off after a failure);
   * `false`: leaves those out. Absent: no such filter.
   */
  backingOff?: boolean;
  /** Only messages with this subject. */
  subject?: string;
  /** Only messages settled before this instant (epoch ms). */
  settledBefore?: number;
  /** 1..1000, default 100. */
  limit?: number;
  offset?: number;
  /** Order: `newest` first (default) by sequence, or `settled` (latest settled first). */
  order?: "newest" | "settled";
}

/** One failed delivery of a message. */
export interface AttemptError {
  seqNumber: number;
  /** The delivery count of the failed delivery (1 = first). */
  attempt: number;
  error: string;
  failedAt: number;
}

/** Options of `deleteSettled`. */
export interface DeleteSettledOptions {
  /** Which final states (default: all three). */
  states?: MessageState[];
  /** Only those settled more than this long ago. */
  olderThanMs?: number;
  /** Only these messages. */
  seqNumbers?: number[];
  /** Only messages with this subject (a job's task). */
  subject?: string;
  /**
   * Keeps the newest `keepNewest` of the matching messages (latest settled first) and deletes the
   * others: retention by count. 0..`MAX_KEEP_NEWEST`.
   */
  keepNewest?: number;
}

/** A worker process as it announces itself in its heartbeats. */
export interface WorkerInfo {
  workerId: string;
  queues: string[];
  status: "active" | "draining";
  hostname?: string;
  pid?: number;
  concurrency?: number;
  /** Free-form details (namespace, SDK version, tags…). */
  details?: Record<string, string>;
}

/** A worker as `listWorkers` reports it. */
export interface WorkerRecord extends WorkerInfo {
  startedAt: number;
  lastHeartbeat: number;
}

/** What a heartbeat did. */
export interface HeartbeatResult {
  /** True on the first heartbeat of this worker id (it was not registered). */
  registered: boolean;
  /** Workers this heartbeat removed for not heartbeating within `staleAfterMs`; each is reported once. */
  reaped: WorkerRecord[];
}

// --- flows, message logs and the event log ------------------------------------------------------

/** One message of a flow (`sendFlow`): stored with the others in one transaction. */
export interface FlowNode {
  /** The queue it goes to (it must exist). */
  queue: string;
  message: OutgoingMessage;
  /**
   * The index in the same list of the node it is a child of (an earlier node). A node with children
   * waits (state `deferred`) until every child is settled; `releaseDependents` then makes it active.
   */
  parent?: number;
  /** Default true: when this child dies (dead-lettered or cancelled), its parent is dead-lettered too. */
  failParentOnFailure?: boolean;
}

/** How a child ended, as its parent sees it. */
export type DependencyOutcome = "completed" | "failed" | "cancelled";

/** One child of a waiting message (`dependencies`). */
export interface Dependency {
  /** The child's sequence number. */
  seqNumber: number;
  failParentOnFailure: boolean;
  /** Absent while the child is not settled (or not yet seen settled by `releaseDependents`). */
  outcome?: DependencyOutcome;
  /** Why a failed child failed (its dead-letter description). */
  error?: string;
}

/** One line of a message's log. */
export interface MessageLogEntry {
  /** 1 for the first line ever appended to the message (lines dropped by the cap keep their numbers). */
  index: number;
  at: number;
  text: string;
}

/** A page of a message's log, oldest first. */
export interface MessageLogPage {
  entries: MessageLogEntry[];
  /** Lines kept (at most `MAX_MESSAGE_LOG_LINES`). */
  total: number;
}

/** An event to append to the event log. */
export interface EventInput {
  /** The event's name (1..64 characters), e.g. `job.completed`. */
  type: string;
  /** Its payload, as the producer encoded it (at most `MAX_EVENT_DATA_BYTES` UTF-8 bytes). */
  data: string;
}

/** An event of the event log. */
export interface StoredEvent extends EventInput {
  /** Increasing with append order; the cursor of `readEvents`. */
  id: number;
  at: number;
}

/** What `readEvents` returns. */
export interface EventPage {
  /** The events after the cursor, oldest first. */
  events: StoredEvent[];
  /** The id of the newest stored event (0 when the log is empty): a cursor that skips the past. */
  lastId: number;
}

// --- job metrics and debounced sends ----------------------------------------------------------

/** What `addMetrics` counts and `readMetrics` reads: settled jobs that completed, or that failed for good. */
export type MetricKind = "completed" | "failed";

/** Settlements to count in the current minute's bucket. */
export interface MetricIncrement {
  queue: string;
  kind: MetricKind;
  /** 1..`MAX_METRIC_INCREMENT`. */
  count: number;
}

/** Which buckets `readMetrics` sums. */
export interface MetricsQuery {
  /** Only these queues (default: every queue). At most `MAX_NAME_LIST`. */
  queues?: string[];
  /** Epoch ms, inclusive (default: `to` minus `METRICS_RETENTION_MS`). */
  from?: number;
  /** Epoch ms, inclusive (default: now). At most `METRICS_RETENTION_MS` after `from`. */
  to?: number;
}

/** One minute with settlements: its start (epoch ms) and the count, summed over the queues asked for. */
export interface MetricPoint {
  minute: number;
  count: number;
}

/** Options of `sendDebounced`. */
export interface DebounceOptions {
  /** The window's key within the queue (1..`MAX_DEBOUNCE_KEY_BYTES` UTF-8 bytes). */
  key: string;
  /** Each send moves the delivery to `now + windowMs` (1..`MAX_DEBOUNCE_MS`). */
  windowMs: number;
  /** …but never past the window's opening plus `maxWaitMs` (`windowMs..MAX_DEBOUNCE_MS`). */
  maxWaitMs: number;
  /** A later send replaces the waiting message's body (default false: the first body is kept). */
  replaceBody?: boolean;
}

/** What `sendDebounced` did. */
export interface DebouncedSend {
  seqNumber: number;
  /** True when it stored a new message (a window opened); false when it moved a waiting one. */
  created: boolean;
}

/** The job face's engine capabilities (see the file comment). Every method is async. */
export interface JobService {
  /** Pauses a queue: its messages stay, nothing is claimed from it until `resumeQueue`. Idempotent. */
  pauseQueue(name: string): Promise<void>;
  /** Resumes a paused queue (and wakes its long-polls). Idempotent. */
  resumeQueue(name: string): Promise<void>;
  /**
   * Claims up to `maxMessages` peek-lock deliveries from `queues`, taken in the order given (a
   * later queue only fills what the earlier left), long-polling on all of them. Every message
   * carries its `queue`. Unknown queues are treated as empty; gates hold back gated subjects.
   */
  receiveAny(queues: string[], options?: ReceiveAnyOptions): Promise<Message[]>;
  /**
   * Cancels a message that is waiting (active, scheduled or deferred): it becomes `cancelled`.
   * A locked message gets a cancel request (or, given its lock token, is settled as cancelled).
   */
  cancelMessage(queue: string, seqNumber: number, options?: CancelMessageOptions): Promise<CancelOutcome>;
  /** Records the lock holder's progress (0..100) on a locked message. */
  setProgress(queue: string, seqNumber: number, lockToken: string, progress: number): Promise<void>;
  /** The messages with these sequence numbers, whatever their queue and state (unknown ones are left out). */
  getMessages(seqNumbers: number[]): Promise<MessageRecord[]>;
  /** Lists stored messages across queues (default newest first). */
  browse(options?: BrowseOptions): Promise<MessageRecord[]>;
  /** Every failed delivery of a message (the errors given to abandon and reject), oldest first. */
  messageErrors(seqNumber: number): Promise<AttemptError[]>;
  /**
   * Waits until one of the messages is settled (completed, cancelled, dead-lettered or deleted), at
   * most `waitMs` (clamped to 0..20000). Returns the settled ones (empty at the deadline).
   */
  awaitSettled(seqNumbers: number[], options?: { waitMs?: number; signal?: AbortSignal }): Promise<number[]>;
  /** Deletes settled messages of a queue. Returns how many. */
  deleteSettled(queue: string, options?: DeleteSettledOptions): Promise<number>;
  /**
   * Makes scheduled messages of a queue (a delayed or scheduled send, a retry waiting out its
   * backoff) claimable now. Messages in other states are left alone. At most
   * `MAX_SEQ_NUMBERS_PER_CALL`. Returns how many it promoted.
   */
  promoteMessages(queue: string, seqNumbers: number[]): Promise<number>;
  /**
   * Deletes messages of a queue in any state but `locked` (a message being handled is left alone;
   * cancel it first). Waiters of `awaitSettled` see them settled. At most `MAX_SEQ_NUMBERS_PER_CALL`.
   * Returns how many it deleted.
   */
  removeMessages(queue: string, seqNumbers: number[]): Promise<number>;
  /**
   * Records a worker's heartbeat (registering it on the first), and removes workers whose last
   * heartbeat is older than `staleAfterMs` (default 30000), reporting each removal to one caller.
   */
  heartbeat(worker: WorkerInfo, options?: { staleAfterMs?: number }): Promise<HeartbeatResult>;
  /** Every registered worker, by id. */
  listWorkers(): Promise<WorkerRecord[]>;
  /** Unregisters a worker. Returns whether it was registered. */
  removeWorker(workerId: string): Promise<boolean>;
  /**
   * Takes (or renews, for the same owner) a named lease for `ttlMs`. Returns false while another
   * owner holds it unexpired.
   */
  acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases a lease held by `owner`. Returns whether it held it. */
  releaseLock(name: string, owner: string): Promise<boolean>;
  // --- flows, message logs and the event log ----------------------------------------------------
  /**
   * Stores a tree of messages in one transaction: nodes with children wait (state `deferred`) until
   * `releaseDependents` sees every child settled. Returns the sequence numbers in the nodes' order.
   * At most `MAX_FLOW_NODES` nodes.
   */
  sendFlow(nodes: FlowNode[]): Promise<number[]>;
  /**
   * Resolves the dependencies whose child is settled (completed, cancelled, dead-lettered, or
   * deleted, which counts as completed): a waiting parent with no open child becomes active, or is
   * dead-lettered (reason `ChildFailed`) when a child that fails its parent did not complete, which
   * resolves the parent's own parent in turn. With `seqNumbers`, only those children are looked at;
   * without, every open dependency. Returns how many parents it released or failed. (A message's
   * dependencies and log lines are deleted with it.)
   */
  releaseDependents(seqNumbers?: number[]): Promise<number>;
  /** The children of a message sent by `sendFlow`, in sequence order (empty for any other). */
  dependencies(seqNumber: number): Promise<Dependency[]>;
  /**
   * Appends lines to a locked message's log (fenced by its lock token). Each line is at most
   * `MAX_LOG_LINE_BYTES`; at most `MAX_LOG_LINES_PER_CALL` per call; the log keeps the latest
   * `MAX_MESSAGE_LOG_LINES` lines. Returns how many lines it keeps.
   */
  appendMessageLog(queue: string, seqNumber: number, lockToken: string, lines: string[]): Promise<number>;
  /** A message's log lines, oldest first (`limit` 1..1000, default 100). */
  messageLog(seqNumber: number, options?: { offset?: number; limit?: number }): Promise<MessageLogPage>;
  /**
   * Appends events (at most `MAX_EVENTS_PER_CALL`) to the store's event log, which keeps the latest
   * `MAX_EVENT_LOG_EVENTS` events, none older than `EVENT_LOG_RETENTION_MS`.
   */
  appendEvents(events: EventInput[]): Promise<void>;
  /** Events with an id above `afterId`, oldest first (`limit` 0..1000, default 100). */
  readEvents(afterId: number, options?: { limit?: number }): Promise<EventPage>;
  // --- job metrics and debounced sends ----------------------------------------------------------
  /**
   * Adds settlements to the per-minute buckets of the current minute (at most
   * `MAX_METRIC_INCREMENTS_PER_CALL` increments). Buckets older than `METRICS_RETENTION_MS` are
   * dropped.
   */
  addMetrics(increments: MetricIncrement[]): Promise<void>;
  /** The minutes of `[from, to]` with settlements of `kind`, oldest first (empty minutes left out). */
  readMetrics(kind: MetricKind, query?: MetricsQuery): Promise<MetricPoint[]>;
  /**
   * Sends a message through a debounce window, in one transaction: while the window's message is
   * still scheduled and never delivered, this moves its delivery to
   * `min(now + windowMs, opened + maxWaitMs)` (and, with `replaceBody`, takes the new body) instead of
   * storing another; otherwise it stores the message, scheduled `windowMs` from now, and opens the
   * window. The message's own delay and unique key do not apply.
   */
  sendDebounced(queue: string, message: OutgoingMessage, options: DebounceOptions): Promise<DebouncedSend>;
}
