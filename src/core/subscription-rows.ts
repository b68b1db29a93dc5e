import { InvalidArgumentError } from "../contract/errors.js";
import type { TaskSubscribeOptions } from "../contract/topic-service.js";
import type { SubscriptionInfo, SubscriptionKind } from "../contract/types.js";
import type { MessageFilter } from "../filter/index.js";

/** One subscription of a topic, with its filter compiled once. */
export interface Target {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  paused: boolean;
  /** Undefined matches every message. */
  filter: MessageFilter | undefined;
  /** Task subscriptions: the task (the deliveries' subject) and the queue the deliveries go to. */
  task?: string;
  queue?: string;
  /** Creation order: when, then the row's insertion position (a publish returns its copies in this order). */
  createdAt: number;
  position: number;
  /** Delivery settings of a task subscription (null / 0: unset). */
  priority?: number | null;
  maxDeliveries?: number;
  lockDurationMs?: number;
}

export interface SubscriptionRow {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  filter: string | null;
  paused: number;
  created_at: number;
  task: string | null;
  target_queue: string | null;
  durable: number;
  owner: string | null;
  priority: number | null;
  max_deliveries: number;
  lock_duration_ms: number;
  cursor: number | null;
  position?: number;
}

/** A subscription row as `listSubscriptions` reports it. */
export function subscriptionInfo(r: SubscriptionRow): SubscriptionInfo {
  const info: SubscriptionInfo = {
    topic: r.topic,
    name: r.name,
    kind: r.kind,
    paused: r.paused === 1,
    createdAt: r.created_at,
  };
  if (r.filter) info.filter = r.filter;
  if (r.kind === "task") {
    info.task = r.task ?? "";
    info.queue = r.target_queue ?? "";
    info.durable = r.durable !== 0;
    if (r.owner) info.owner = r.owner;
    if (r.priority !== null) info.priority = r.priority;
    if (r.max_deliveries > 0) info.maxDeliveryCount = r.max_deliveries;
    if (r.lock_duration_ms > 0) info.lockDurationMs = r.lock_duration_ms;
  }
  if (r.kind === "log" && r.cursor !== null) info.cursor = r.cursor;
  return info;
}

/** A validated task subscription. */
export interface TaskSpec {
  task: string;
  queue: string;
  filter: string;
  durable: boolean;
  owner: string | null;
  priority: number | null;
  maxDeliveries: number;
  lockDurationMs: number;
}

/** A task or log subscription as the one job-subscription upsert writes it. */
export interface JobSubscription {
  topic: string;
  name: string;
  kind: "task" | "log";
  filter: string | null;
  task: string | null;
  queue: string | null;
  /** 1: durable; 0: ephemeral (reaped once its `owner` is gone). */
  durable: number;
  owner: string | null;
  priority: number | null;
  maxDeliveries: number;
  lockDurationMs: number;
  now: number;
}

/** A task subscription's row. */
export function taskParams(topic: string, name: string, s: TaskSpec, now: number): JobSubscription {
  return {
    topic,
    name,
    kind: "task",
    filter: s.filter || null,
    task: s.task,
    queue: s.queue,
    durable: s.durable ? 1 : 0,
    owner: s.durable ? null : s.owner,
    priority: s.priority,
    maxDeliveries: s.maxDeliveries,
    lockDurationMs: s.lockDurationMs,
    now,
  };
}

/** A log subscription's row: a durable cursor over the topic's log. */
export function logParams(topic: string, name: string, filter: string, now: number): JobSubscription {
  return {
    topic,
    name,
    kind: "log",
    filter: filter || null,
    task: null,
    queue: null,
    durable: 1,
    owner: null,
    priority: null,
    maxDeliveries: 0,
    lockDurationMs: 0,
    now,
  };
}

/** A subscription row as publishing uses it, its filter compiled by `compile` (a dialect may cache). */
export function targetOf(r: SubscriptionRow, compile: (source: string) => MessageFilter): Target {
  const t: Target = {
    topic: r.topic,
    name: r.name,
    kind: r.kind,
    paused: r.paused === 1,
    filter: r.filter ? compile(r.filter) : undefined,
    createdAt: r.created_at,
    position: r.position ?? 0,
  };
  if (r.kind === "task") {
    t.task = r.task ?? "";
    t.queue = r.target_queue ?? "";
    t.priority = r.priority;
    t.maxDeliveries = r.max_deliveries;
    t.lockDurationMs = r.lock_duration_ms;
  }
  return t;
}

/** Validates `subscribeTask`'s options (names, settings, owner of an ephemeral subscription). */
export function taskSpec(
  options: TaskSubscribeOptions,
  requireName: (v: unknown, what: string) => string,
  integer: (v: unknown, field: string, fallback?: number, max?: number) => number,
): TaskSpec {
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError("mqlite: task subscription options are required");
  requireName(options.task, "task");
  requireName(options.queue, "queue");
  const durable = options.durable !== false;
  if (!durable && !options.owner) {
    throw new InvalidArgumentError("mqlite: an ephemeral subscription requires its owner (the worker id)");
  }
  const nonNegative = (v: unknown, field: string, max: number) => {
    const n = integer(v, field, 0, max);
    if (n < 0) throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
    return n;
  };
  return {
    task: options.task,
    queue: options.queue,
    filter: (options.filter ?? "").trim() === "" ? "" : (options.filter as string),
    durable,
    owner: durable ? null : (options.owner as string),
    priority:
      options.priority === undefined || options.priority === null
        ? null
        : integer(options.priority, "priority", 0, 2 ** 31 - 1),
    maxDeliveries: nonNegative(options.maxDeliveryCount, "max_delivery_count", 1_000_000_000),
    lockDurationMs: nonNegative(options.lockDurationMs, "lock_duration_ms", 10 * 365 * 24 * 3600 * 1000),
  };
}
