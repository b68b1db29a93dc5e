import {
  AlreadyExistsError,
  InvalidArgumentError,
  NameConflictError,
  NotFoundError,
} from "../../contract/errors.js";
import type { PublishResult } from "../../contract/topic-service.js";
import type { Message, SendOptions } from "../../contract/types.js";
import type { PreparedMessage } from "../outgoing.js";
import { ask, type Ops, type Verb, type WriteScope } from "../port.js";
import type { QueueRow } from "../queue-config.js";
import type { Target } from "../subscription-rows.js";
import { integer, nonNegativeDuration } from "../validate.js";
import type { PlainClaim } from "../waiters.js";
import type { DebounceOps } from "./send-debounce.js";
import { type Copy, deliveries, type FilterFailure, route } from "./send-fanout.js";
import { type HandOff, handedMessages, handOffOf } from "./send-hand-off.js";
import {
  type DedupHit,
  type DedupKey,
  type NewRow,
  newRow,
  type SendTiming,
  type Stored,
  storeRows,
} from "./send-rows.js";

/** What a name is: a topic's subscriptions (by name), else a queue's row, else a declared topic. */
export interface Route {
  targets?: Target[];
  queue?: QueueRow;
  declared?: { retention_ms: number | null };
}

/**
 * The statements the send verbs need (send, schedule, cancel, publish, sendFlow, sendDebounced:
 * insertion, fan-out, dedup).
 */
export interface SendOps extends DebounceOps {
  /** What `name` is (see `Route`): the subscriptions are read first, the queue only without any. */
  route(name: string): Route;
  /** The rows of those of these queues that exist. */
  queueRows(names: string[]): Map<string, QueueRow>;
  /** Creates a task subscription's queue deleted behind it; returns its row. */
  createQueue(name: string, now: number): QueueRow;
  /**
   * Makes concurrent senders of these rows wait for each other where the ids' order or a key's
   * check demands it (before any row is looked up); a single-writer dialect has nothing to do.
   */
  serialize(rows: readonly NewRow[], dedup: readonly (DedupKey | undefined)[]): void;
  /** The seq of the live message of `queue` holding `uniqueKey`. */
  findLive(queue: string, uniqueKey: string): number | undefined;
  /** The dedup row of `key` in `queue` seen after `since`. */
  findDedup(queue: string, key: string, since: number): DedupHit | undefined;
  /** Stores one row (and its dedup row, when given); returns its seq. */
  insert(row: NewRow, dedup?: DedupKey): number;
  /** Stores rows that need no look first; their seqs, in order (ascending). */
  insertMany(rows: readonly NewRow[]): number[];
  /**
   * Stores rows for `queue` only while its row is still current (a cached copy): their seqs, or
   * undefined when it is not (nothing stored). With `handOff`, the rows it locks are stored locked
   * (`handed`) when no claimable row of the queue has its `floor` priority or more; else every row
   * is stored as it would be without it.
   */
  insertFresh(queue: QueueRow, rows: readonly NewRow[], handOff?: HandOff): FreshRows | undefined;
  /** Appends a message to a topic's log; returns its log id. */
  appendLog(topic: string, m: PreparedMessage, now: number, expiresAt: number): number;
  /** Deletes a never-delivered scheduled message; false when there is none. */
  cancel(queue: string, seq: number): boolean;
}

/** What `insertFresh` stored: the seqs, and whether the hand-off's rows were stored locked. */
export interface FreshRows {
  ids: number[];
  handed: boolean;
}

/** A send's validated options: when to deliver (0: now) and the TTL (0: none). */
export interface SendAt {
  scheduledAt: number;
  ttlMs: number;
}

/** Validates a send's options. */
export function sendAt(options: SendOptions): SendAt {
  const scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
  if (scheduledAt < 0)
    throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must not be negative");
  return { scheduledAt, ttlMs: nonNegativeDuration(options.ttlMs, "ttl_ms") };
}

/** The send's timing in a transaction at `now`: a scheduled time must be in its future. */
function timing(at: SendAt, now: number): SendTiming {
  if (at.scheduledAt > 0 && at.scheduledAt <= now) {
    throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must be in the future");
  }
  return { now, visibleAt: at.scheduledAt > 0 ? at.scheduledAt : now, ttlMs: at.ttlMs };
}

/** A single-message send whose id was seen with another body within the dedup window. */
const dedupConflict = () =>
  new AlreadyExistsError(
    "mqlite: a message with this id and a different body was sent within the dedup window",
  );

/** What a send did. */
export interface Sent {
  /** A seq per message (the new row's, or the one that answered for it), 0 for none. */
  seqs: number[];
  /** Per message, for a topic: what the publish made of it. */
  published: PublishResult[];
  /** How many rows the send stored. */
  stored: number;
}

/**
 * Announces what the rows stored: claimable messages per queue (with how many, so a hand-off takes
 * no more), the earliest scheduled delivery, the sent counters. Rows with a lock in `locked` were
 * handed to a receiver: not claimable.
 */
function announce(
  s: WriteScope,
  rows: readonly NewRow[],
  stored: Stored,
  locked?: readonly unknown[],
): number {
  // Per queue, in first-seen order (arrays, not maps: most sends store into one queue).
  const queues: string[] = [];
  const active: number[] = [];
  const sent: number[] = [];
  let next = Number.POSITIVE_INFINITY;
  let n = 0;
  for (let k = 0; k < rows.length; k++) {
    if (stored[k]! <= 0) continue;
    n++;
    const r = rows[k]!;
    const q = r.queue.name;
    let j = queues.length - 1;
    if (j < 0 || queues[j] !== q) {
      j = queues.indexOf(q);
      if (j < 0) j = queues.push(q) - 1;
      active[j] ??= 0;
      sent[j] ??= 0;
    }
    sent[j]!++;
    if (r.state !== "active") {
      if (r.visibleAt < next) next = r.visibleAt;
    } else if (locked?.[k] === undefined) active[j]!++;
  }
  for (let j = 0; j < queues.length; j++) if (active[j]! > 0) s.effects.activated(queues[j]!, active[j]);
  if (next !== Number.POSITIVE_INFINITY) s.effects.scheduled(next);
  for (let j = 0; j < queues.length; j++) s.effects.sent(queues[j]!, sent[j]!);
  return n;
}

/**
 * The one send path: a plain queue stores each message; a topic fans each message out to its
 * matching subscriptions (a copy per queue subscription, a job per task subscription) and stores it
 * once in its log when an active log subscription takes it or the topic is declared. `publish`
 * refuses a queue's name.
 */
export function* send(
  s: WriteScope,
  name: string,
  messages: readonly PreparedMessage[],
  at: SendAt,
  publish = false,
): Verb<Sent> {
  const t = timing(at, s.now);
  const r = (yield (o: Ops) => o.send.route(name)) as Route;
  if (publish && r.queue) throw new NameConflictError(`mqlite: "${name}" is a queue, not a topic`);
  if (r.targets || r.declared) return yield* fanOut(s, name, r, messages, t);
  if (!r.queue) throw new NotFoundError("mqlite: queue not found");
  const q = r.queue;
  const rows = messages.map((m) => newRow(q, m, t));
  const stored = yield* storeRows(rows);
  const seqs = stored.map((x) => {
    if (x === 0 && messages.length === 1) throw dedupConflict();
    return Math.abs(x);
  });
  return { seqs, published: [], stored: announce(s, rows, stored) };
}

function* fanOut(
  s: WriteScope,
  topic: string,
  r: Route,
  messages: readonly PreparedMessage[],
  t: SendTiming,
): Verb<Sent> {
  const failures: FilterFailure[] = [];
  const { copies, toLog } = r.targets
    ? route(topic, r.targets, messages, t, failures)
    : { copies: [] as Copy[], toLog: messages.map(() => false) };
  for (const f of failures) s.effects.filterFailed(f);
  const rows: NewRow[] = [];
  if (copies.length > 0) {
    const queues = yield* ask((o) => o.send.queueRows([...new Set(copies.map((k) => k.queue))]));
    for (const k of copies) {
      let q = queues.get(k.queue);
      if (!q) {
        if (k.kind !== "task") throw new NotFoundError("mqlite: queue not found");
        // A task subscription's queue deleted behind it is created again.
        q = yield* ask((o) => o.send.createQueue(k.queue, t.now));
        queues.set(k.queue, q);
      }
      rows.push(newRow(q, k.m, t, k.origin));
    }
  }
  const stored = rows.length > 0 ? yield* storeRows(rows) : [];
  const out: Sent = { seqs: [], published: [], stored: announce(s, rows, stored) };
  const queueRows = rows.map((x) => x.queue);
  for (const [i, m] of messages.entries()) {
    const { result, seq, conflict } = deliveries(i, copies, queueRows, stored, r.targets);
    if (messages.length === 1 && conflict && seq === 0) throw dedupConflict();
    if (toLog[i] || r.declared) {
      let expiresAt = t.ttlMs > 0 ? t.now + t.ttlMs : 0;
      const retention = r.declared?.retention_ms;
      // A declared topic's retention bounds what only the declaration keeps.
      if (expiresAt === 0 && !toLog[i] && retention !== null && retention !== undefined) {
        expiresAt = t.now + retention;
      }
      result.logId = yield* ask((o) => o.send.appendLog(topic, m, t.now, expiresAt));
    }
    out.seqs.push(seq);
    out.published.push(result);
  }
  return out;
}

/**
 * A send of plain rows (see `plainSend`) to a queue known from a cached row, in one statement that
 * stores nothing when the row is stale: undefined then (the caller sends again, the long way).
 * `receiver` is asked, once the send has claimable rows, for a parked receiver's claim: the rows
 * that claim would take are then stored locked for it (`handed`: its answer), so that it needs no
 * claim of its own.
 */
export function* sendFresh(
  s: WriteScope,
  q: QueueRow,
  messages: readonly PreparedMessage[],
  at: SendAt,
  receiver?: () => PlainClaim | undefined,
): Verb<{ ids: number[]; handed: Message[] } | undefined> {
  const t = timing(at, s.now);
  const rows = messages.map((m) => newRow(q, m, t));
  const claim = receiver && !q.paused && rows.some((r) => r.state === "active") ? receiver() : undefined;
  const handOff = claim && handOffOf(q, rows, claim, s.now);
  const out = (yield (o: Ops) => o.send.insertFresh(q, rows, handOff)) as FreshRows | undefined;
  if (!out) return undefined;
  if (!handOff || !out.handed) {
    announce(s, rows, out.ids);
    return { ids: out.ids, handed: [] };
  }
  announce(s, rows, out.ids, handOff.locks);
  let earliest = Number.POSITIVE_INFINITY;
  for (const l of handOff.locks) if (l && l.lockedUntil < earliest) earliest = l.lockedUntil;
  s.effects.leased(earliest);
  return { ids: out.ids, handed: handedMessages(handOff, rows, out.ids, claim) };
}

/** Cancels a scheduled message that was never delivered. */
export function* cancel(_s: WriteScope, queue: string, seq: number): Verb<void> {
  if (!(yield* ask((o) => o.send.cancel(queue, seq)))) {
    throw new NotFoundError("mqlite: no scheduled, never-delivered message with that seq_number");
  }
}
