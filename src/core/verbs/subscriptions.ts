import { NameConflictError, NotFoundError } from "../../contract/errors.js";
import type { TopicBacklog } from "../../contract/topic-service.js";
import type { QueueConfig, SubscriptionInfo } from "../../contract/types.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import { normalizeQueueConfig } from "../queue-config.js";
import {
  type JobSubscription,
  logParams,
  type SubscriptionRow,
  subscriptionInfo,
  type TaskSpec,
  taskParams,
} from "../subscription-rows.js";
import { type DeliveryCount, topicBacklog } from "../topic-stats.js";
import { dropQueueInSteps, saveQueue } from "./queues.js";

/** A subscription's key. */
export interface SubscriptionKey {
  topic: string;
  name: string;
}

/** The subscription statements (part of `QueueOps`). */
export interface SubscriptionOps {
  /** One subscription row, or undefined. */
  subscription(a: SubscriptionKey): SubscriptionRow | undefined;
  /** The queue subscription named `name`, of whichever topic (its name is its backing queue's). */
  queueSubscriptionNamed(name: string): SubscriptionRow | undefined;
  /** Creates a queue subscription, or updates its filter (its pause state and creation time stay). */
  saveQueueSubscription(a: SubscriptionKey & { filter: string | null; now: number }): void;
  /** Creates a task or log subscription, or updates it (its pause state, creation time and cursor stay). */
  saveJobSubscription(a: JobSubscription): void;
  /** Deletes a subscription row and returns it; undefined when there was none. */
  deleteSubscription(a: SubscriptionKey): SubscriptionRow | undefined;
  /** Sets a subscription's pause flag; false when it does not exist. */
  setSubscriptionPaused(a: SubscriptionKey & { paused: boolean; now: number }): boolean;
  /** Every subscription, by topic then name. */
  subscriptions(): SubscriptionRow[];
  /** Task subscriptions' deliveries grouped by subscription and state, of one topic or all. */
  deliveryCounts(topic: string | undefined): DeliveryCount[];
  /**
   * Deletes the ephemeral subscriptions whose owner has not heartbeaten since `liveAfter` and that
   * were created before `graceBefore`; how many.
   */
  reapSubscriptions(a: { liveAfter: number; graceBefore: number }): number;
  /** Deletes a log subscription's per-message leases and acknowledgements. */
  dropLogDeliveries(a: SubscriptionKey): void;
  /** How many log subscriptions the topic has (paused ones included). */
  logSubscriptionCount(topic: string): number;
  /** Whether the topic is declared. */
  isDeclared(topic: string): boolean;
  /** Deletes the topic's whole log. */
  dropTopicLog(topic: string): void;
}

const SUBSCRIPTION_NOT_FOUND = "mqlite: subscription not found";

/** A topic's name must not be a queue's. */
function* checkTopic(topic: string): Verb<void> {
  if (yield* ask((o) => o.queues.queue(topic))) {
    throw new NameConflictError(`mqlite: topic "${topic}" is the name of a queue`);
  }
}

/**
 * Creates or updates a queue subscription. Its name is its backing queue's, in the one flat
 * namespace: not a plain queue, not another topic's subscription, not a topic. A re-subscribe keeps
 * the backing queue as it is (its `config` applies only when it is created).
 */
export function* subscribe(
  s: WriteScope,
  topic: string,
  name: string,
  filter: string,
  config: Omit<QueueConfig, "kind"> | undefined,
): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  yield* checkTopic(topic);
  const backing = yield* ask((o) => o.queues.queue(name));
  if (backing && backing.kind === "queue") {
    throw new NameConflictError(`mqlite: subscription name "${name}" is the name of a queue`);
  }
  const owner = yield* ask((o) => o.queues.queueSubscriptionNamed(name));
  if (owner && owner.topic !== topic) {
    throw new NameConflictError(`mqlite: "${name}" is already a subscription of topic "${owner.topic}"`);
  }
  if (yield* ask((o) => o.queues.isTopic(name))) throw new NameConflictError(`mqlite: "${name}" is a topic`);
  const existing = yield* ask((o) => o.queues.subscription({ topic, name }));
  if (existing && existing.kind !== "queue") {
    throw new NameConflictError(`mqlite: "${name}" is a ${existing.kind} subscription of "${topic}"`);
  }
  if (!backing)
    yield* saveQueue(s, name, normalizeQueueConfig({ ...config, kind: "subscription" }), undefined);
  yield* ask((o) => o.queues.saveQueueSubscription({ topic, name, filter: filter || null, now: s.now }));
}

/** A task or log subscription's name must not be a queue subscription's of the same topic. */
function* checkJobSubscription(topic: string, name: string): Verb<void> {
  yield* checkTopic(topic);
  const existing = yield* ask((o) => o.queues.subscription({ topic, name }));
  if (existing && existing.kind === "queue") {
    throw new NameConflictError(`mqlite: "${name}" is a queue subscription of "${topic}"`);
  }
}

/** Creates or updates a task subscription; its queue (a plain queue) is created if missing. */
export function* subscribeTask(s: WriteScope, topic: string, name: string, spec: TaskSpec): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  yield* checkJobSubscription(topic, name);
  const target = yield* ask((o) => o.queues.queue(spec.queue));
  if (target && target.kind !== "queue") {
    throw new NameConflictError(`mqlite: "${spec.queue}" is a subscription's backing queue`);
  }
  if (!target) yield* saveQueue(s, spec.queue, normalizeQueueConfig(), undefined);
  yield* ask((o) => o.queues.saveJobSubscription(taskParams(topic, name, spec, s.now)));
}

/** Creates a log subscription, or updates its filter (its cursor is kept). */
export function* subscribeLog(s: WriteScope, topic: string, name: string, filter: string): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  yield* checkJobSubscription(topic, name);
  yield* ask((o) => o.queues.saveJobSubscription(logParams(topic, name, filter, s.now)));
}

/**
 * Removes a subscription with what is its own: a queue subscription's backing queue, a log
 * subscription's deliveries (and the topic's log with its last log subscription, unless declared).
 */
export function* unsubscribe(topic: string, name: string): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  const row = yield* ask((o) => o.queues.deleteSubscription({ topic, name }));
  if (!row) throw new NotFoundError(SUBSCRIPTION_NOT_FOUND);
  if (row.kind === "queue") yield* dropQueueInSteps(name);
  if (row.kind === "log") {
    yield* ask((o) => o.queues.dropLogDeliveries({ topic, name }));
    if (
      (yield* ask((o) => o.queues.logSubscriptionCount(topic))) === 0 &&
      !(yield* ask((o) => o.queues.isDeclared(topic)))
    ) {
      yield* ask((o) => o.queues.dropTopicLog(topic));
    }
  }
}

export function* setSubscriptionPaused(
  s: WriteScope,
  topic: string,
  name: string,
  paused: boolean,
): Verb<void> {
  if (!(yield* ask((o) => o.queues.setSubscriptionPaused({ topic, name, paused, now: s.now })))) {
    throw new NotFoundError(SUBSCRIPTION_NOT_FOUND);
  }
}

export function* listSubscriptions(): Verb<SubscriptionInfo[]> {
  return (yield* ask((o) => o.queues.subscriptions())).map(subscriptionInfo);
}

/** The backlog of each task subscription (of `topic`, or of every topic). */
export function* topicStats(topic: string | undefined): Verb<TopicBacklog[]> {
  const subs = (yield* ask((o) => o.queues.subscriptions())).filter(
    (r) => r.kind === "task" && (topic === undefined || r.topic === topic),
  );
  return topicBacklog(subs, yield* ask((o) => o.queues.deliveryCounts(topic)));
}

/** Removes the ephemeral subscriptions whose worker is gone (past the grace window); how many. */
export function* reapSubscriptions(s: WriteScope, livenessMs: number, graceMs: number): Verb<number> {
  return yield* ask((o) =>
    o.queues.reapSubscriptions({ liveAfter: s.now - livenessMs, graceBefore: s.now - graceMs }),
  );
}
