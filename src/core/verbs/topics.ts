import { NameConflictError } from "../../contract/errors.js";
import type {
  EngineDeclaredTopic,
  EngineTopicLogStat,
  TopicLogMessage,
} from "../../contract/topic-service.js";
import type { MessageFilter } from "../../filter/index.js";
import { ANSWER_BUDGET_BYTES, AnswerBudget } from "../answer-budget.js";
import {
  DEFAULT_TOPIC_READ,
  FILTERED_READ_BATCH,
  logFilterMessage,
  MAX_TOPIC_READ,
  type TopicMessageRow,
  topicMessage,
} from "../fanout.js";
import { ask, type Verb, type WriteScope } from "../port.js";

/** A declared topic as stored. */
export interface DeclaredRow {
  name: string;
  retentionMs: number | null;
  createdAt: number;
}

/** A log subscription: where its cursor is and what it reads (its filter compiled; undefined: all). */
export interface LogSubscription {
  cursor: number | null;
  filter: MessageFilter | undefined;
}

/** One log subscription's backlog: the live log rows after its cursor. */
export interface LogLag {
  topic: string;
  subscription: string;
  cursor: number | null;
  lag: number;
  /** When the oldest of them was published (null: none). */
  oldest: number | null;
}

/** One message of a log subscription (`ack`, `nack`, the cursor). */
export interface LogRef {
  topic: string;
  name: string;
  id: number;
}

/** A read of the log: live rows after `after`. */
export interface LogRead {
  topic: string;
  after: number;
  now: number;
  limit: number;
}

/** What one lease pass hands out (`leased`, until `until`) and settles at once (`skipped`). */
export interface LeaseGrant {
  topic: string;
  name: string;
  now: number;
  until: number;
  leased: number[];
  skipped: number[];
}

/**
 * The statements the topics verbs need (declared and log topics: declare, read, ack, lease, nack,
 * stats). A log row is live while it has no expiry or its expiry is after `now`.
 */
export interface TopicOps {
  /** Declares (or re-declares, keeping its creation time) a topic unless a queue has its name: false then. */
  declare(a: { name: string; retentionMs: number | null; now: number }): boolean;
  /** Every declared topic, by name. */
  declared(): DeclaredRow[];
  /** The log subscription `name` of `topic`; undefined when there is none of that kind. */
  logSubscription(a: { topic: string; name: string }): LogSubscription | undefined;
  /**
   * Up to `limit` live log rows after `after`, oldest first; with `maxBytes`, ending with the row
   * whose bytes (as `rowBytes` counts them) bring the total to it.
   */
  rows(a: LogRead & { maxBytes?: number }): TopicMessageRow[];
  /**
   * Up to `limit` live log rows after `after` that subscription `name` may lease (never leased, or
   * whose lease lapsed or was given back), oldest first, each with `attempts`: its leases so far.
   */
  leasable(a: LogRead & { name: string }): TopicMessageRow[];
  /**
   * Leases the `leased` rows to `name` until `until` (counting an attempt each); records the
   * `skipped` ones (its filter refuses them) as acknowledged without an attempt.
   */
  lease(a: LeaseGrant): void;
  /** Moves a log subscription's cursor up to `id`; false when it is no log subscription or is there already. */
  moveCursor(a: LogRef): boolean;
  /** Acknowledges a leased row; false when it is not leased (never, or acknowledged already). */
  ack(a: LogRef): boolean;
  /** Ends a row's lease now (it is leasable again); false when it is not leased. */
  nack(a: LogRef): boolean;
  /** The backlog of every log subscription (of `topic`, when given), by topic then name. */
  lags(a: { topic: string | undefined; now: number }): LogLag[];
}

/** A read's or lease's limit: absent 100, ≤0 nothing, at most 1000. */
export function topicLimit(limit: number | undefined): number {
  if (limit === undefined || limit === null) return DEFAULT_TOPIC_READ;
  const n = Math.trunc(Number(limit));
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.min(n, MAX_TOPIC_READ);
}

/** A declared topic's name is its own: a queue's name is refused. */
export function* declareTopic(s: WriteScope, name: string, retentionMs: number | null): Verb<void> {
  if (!(yield* ask((o) => o.topics.declare({ name, retentionMs, now: s.now })))) {
    throw new NameConflictError(`mqlite: "${name}" is the name of a queue`);
  }
}

export function* listDeclaredTopics(): Verb<EngineDeclaredTopic[]> {
  const rows = yield* ask((o) => o.topics.declared());
  return rows.map((r) => {
    const d: EngineDeclaredTopic = { name: r.name, createdAt: r.createdAt };
    if (r.retentionMs !== null) d.retentionMs = r.retentionMs;
    return d;
  });
}

const refused = (filter: MessageFilter | undefined, r: TopicMessageRow): boolean =>
  filter !== undefined && !filter.matchesAll && !filter.matches(logFilterMessage(r));

/**
 * The messages after a log subscription's cursor that its filter matches, oldest first, up to
 * `limit` and the answer's byte budget (`maxBytes`). Anything but a log subscription reads nothing.
 */
export function* readTopic(
  now: number,
  topic: string,
  name: string,
  limit: number,
  maxBytes: number = ANSWER_BUDGET_BYTES,
): Verb<TopicLogMessage[]> {
  if (limit === 0) return [];
  const sub = yield* ask((o) => o.topics.logSubscription({ topic, name }));
  if (!sub) return [];
  const after = sub.cursor ?? 0;
  if (!sub.filter || sub.filter.matchesAll) {
    const rows = yield* ask((o) => o.topics.rows({ topic, after, now, limit, maxBytes }));
    return rows.map(topicMessage);
  }
  // Filtered: batches of the log until `limit` matches, the budget, or the log's end.
  const out: TopicLogMessage[] = [];
  const budget = new AnswerBudget(maxBytes);
  let from = after;
  for (;;) {
    const rows = yield* ask((o) => o.topics.rows({ topic, after: from, now, limit: FILTERED_READ_BATCH }));
    for (const r of rows) {
      if (!refused(sub.filter, r)) {
        out.push(topicMessage(r));
        if (!budget.add(r)) return out;
      }
      if (out.length >= limit) return out;
    }
    if (rows.length < FILTERED_READ_BATCH) return out;
    from = rows[rows.length - 1]!.id;
  }
}

/** Moves a log subscription's cursor up to `id` (never back). */
export function* ackTopic(_s: WriteScope, ref: LogRef): Verb<boolean> {
  return yield* ask((o) => o.topics.moveCursor(ref));
}

/**
 * Leases up to `limit` messages one by one to a log subscription for `visibilityMs`, oldest first,
 * within the answer's byte budget (`maxBytes`). Messages its filter refuses are settled at once (so per-message
 * compaction can drop them). Anything but a log subscription leases nothing.
 */
export function* leaseTopic(
  s: WriteScope,
  topic: string,
  name: string,
  limit: number,
  visibilityMs: number,
  maxBytes: number = ANSWER_BUDGET_BYTES,
): Verb<TopicLogMessage[]> {
  if (limit === 0) return [];
  const sub = yield* ask((o) => o.topics.logSubscription({ topic, name }));
  if (!sub) return [];
  const out: TopicLogMessage[] = [];
  const budget = new AnswerBudget(maxBytes);
  let after = 0;
  for (;;) {
    const rows = yield* ask((o) =>
      o.topics.leasable({ topic, name, after, now: s.now, limit: FILTERED_READ_BATCH }),
    );
    const leased: number[] = [];
    const skipped: number[] = [];
    let done = rows.length < FILTERED_READ_BATCH;
    for (const r of rows) {
      if (refused(sub.filter, r)) {
        skipped.push(r.id);
        continue;
      }
      leased.push(r.id);
      out.push(topicMessage({ ...r, attempts: Number(r.attempts ?? 0) + 1 }));
      if (out.length >= limit || !budget.add(r)) {
        done = true;
        break;
      }
    }
    if (leased.length > 0 || skipped.length > 0) {
      const until = s.now + visibilityMs;
      yield* ask((o) => o.topics.lease({ topic, name, now: s.now, until, leased, skipped }));
    }
    if (done) return out;
    after = rows[rows.length - 1]!.id;
  }
}

export function* ackMessage(_s: WriteScope, ref: LogRef): Verb<boolean> {
  return yield* ask((o) => o.topics.ack(ref));
}

export function* nackMessage(_s: WriteScope, ref: LogRef): Verb<boolean> {
  return yield* ask((o) => o.topics.nack(ref));
}

/** The lag of every log subscription (of one topic), by topic then name. */
export function* topicLogStats(now: number, topic: string | undefined): Verb<EngineTopicLogStat[]> {
  const lags = yield* ask((o) => o.topics.lags({ topic, now }));
  return lags.map((l) => {
    const stat: EngineTopicLogStat = { topic: l.topic, subscription: l.subscription, lag: l.lag };
    if (l.cursor !== null) stat.cursor = l.cursor;
    if (l.oldest !== null) stat.oldestUnackedAt = l.oldest;
    return stat;
  });
}
