import { z } from "zod";
import type { FilterSample, QueueConfig } from "../../contract/types.js";
import { queueInfoToWire } from "../../wire/queue-config.js";
import { statsToWire, subscriptionToWire } from "../../wire/results.js";
import { bodyFromAgent } from "../body.js";
import { DESTRUCTIVE, READ_ONLY, tool, WRITES } from "../tool.js";
import { bodyEncoding, messageFields, queue } from "./args.js";

const config = z
  .object({
    lock_duration_ms: z.number().int().optional().describe("Peek-lock lease in ms (default 30000)."),
    max_delivery_count: z
      .number()
      .int()
      .optional()
      .describe("Dead-letter after this many deliveries (default 10)."),
    default_ttl_ms: z
      .number()
      .int()
      .optional()
      .describe("Default time to live in ms, also a ceiling (0 = none)."),
    dead_letter_on_expire: z
      .boolean()
      .optional()
      .describe("Dead-letter expired messages (default true) or delete them."),
    dedup_window_ms: z
      .number()
      .int()
      .optional()
      .describe("Duplicate detection window in ms by message_id or body (0 = off)."),
    ordering_mode: z
      .enum(["standard", "group_fifo", "strict_fifo"])
      .optional()
      .describe(
        "standard (default; groups in order), group_fifo (group_id required), strict_fifo (one at a time).",
      ),
    dlq_max_age_ms: z
      .number()
      .int()
      .optional()
      .describe("Keep dead letters this long (0 = broker default, <0 = forever)."),
    dlq_max_count: z
      .number()
      .int()
      .optional()
      .describe("Keep at most this many dead letters (0 = default, <0 = no cap)."),
    dlq_max_bytes: z
      .number()
      .int()
      .optional()
      .describe("Cap on dead-letter body bytes (0 = default, <0 = no cap)."),
  })
  .strict();

function queueConfig(c: z.output<typeof config> | undefined): QueueConfig | undefined {
  if (!c) return undefined;
  const out: QueueConfig = {};
  if (c.lock_duration_ms !== undefined) out.lockDurationMs = c.lock_duration_ms;
  if (c.max_delivery_count !== undefined) out.maxDeliveryCount = c.max_delivery_count;
  if (c.default_ttl_ms !== undefined) out.defaultTtlMs = c.default_ttl_ms;
  if (c.dead_letter_on_expire !== undefined) out.deadLetterOnExpire = c.dead_letter_on_expire;
  if (c.dedup_window_ms !== undefined) out.dedupWindowMs = c.dedup_window_ms;
  if (c.ordering_mode !== undefined) out.orderingMode = c.ordering_mode;
  if (c.dlq_max_age_ms !== undefined) out.dlqMaxAgeMs = c.dlq_max_age_ms;
  if (c.dlq_max_count !== undefined) out.dlqMaxCount = c.dlq_max_count;
  if (c.dlq_max_bytes !== undefined) out.dlqMaxBytes = c.dlq_max_bytes;
  return out;
}

const sample = z
  .object({
    ...messageFields,
    body: z.string().optional().describe("Sample body (text, or base64 with body_encoding)."),
    body_encoding: bodyEncoding,
  })
  .strict();

function filterSample(s: z.output<typeof sample>): FilterSample {
  const out: FilterSample = {};
  if (s.body !== undefined) out.body = bodyFromAgent(s.body, s.body_encoding);
  if (s.message_id) out.messageId = s.message_id;
  if (s.group_id) out.groupId = s.group_id;
  if (s.correlation_id) out.correlationId = s.correlation_id;
  if (s.reply_to) out.replyTo = s.reply_to;
  if (s.subject) out.subject = s.subject;
  if (s.content_type) out.contentType = s.content_type;
  if (s.properties) out.properties = s.properties;
  return out;
}

const olderThan = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe("Only dead letters enqueued more than this many ms ago (0 = any age).");

export const adminTools = [
  tool({
    name: "list_queues",
    title: "List queues",
    description:
      "List every queue (subscription backing queues too, kind subscription) with its configuration. " +
      "Returns {queues:[{name, kind, lock_duration_ms, max_delivery_count, ...}]}.",
    input: {},
    annotations: READ_ONLY,
    run: async (broker) => ({ queues: (await broker.listQueues()).map(queueInfoToWire) }),
  }),
  tool({
    name: "create_queue",
    title: "Create a queue",
    description:
      "Create a queue, or replace an existing queue's configuration. Careful: on an existing queue every " +
      "config field left out reverts to its default. Returns {ok:true}; name_conflict when the name is a " +
      "topic or a subscription.",
    input: {
      name: z.string().min(1).describe("Queue name."),
      config: config.optional().describe("Queue configuration; omitted fields take defaults."),
    },
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.createQueue(a.name, queueConfig(a.config));
      return { ok: true };
    },
  }),
  tool({
    name: "stats",
    title: "Queue statistics",
    description:
      "Count a queue's messages by state (active, locked, deferred, scheduled, dead_lettered, total) with the " +
      "age of the oldest waiting one. Use it to see backlog and dead letters. not_found for an unknown queue.",
    input: { queue },
    annotations: READ_ONLY,
    run: async (broker, a) => statsToWire(await broker.stats(a.queue)),
  }),
  tool({
    name: "redrive",
    title: "Redrive dead letters",
    description:
      "Move dead letters back to active so they are delivered again: in place (delivery count reset), or into " +
      "the target queue. Inspect them first with peek state=dead_lettered. Returns {moved:n}.",
    input: {
      queue,
      max: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe("At most this many, oldest first (0 or absent = all)."),
      target: z.string().optional().describe("Move into this queue instead of back into the same one."),
      older_than_ms: olderThan,
    },
    annotations: WRITES,
    run: async (broker, a) => ({
      moved: await broker.redrive(a.queue, {
        max: a.max ?? 0,
        olderThanMs: a.older_than_ms ?? 0,
        ...(a.target && { target: a.target }),
      }),
    }),
  }),
  tool({
    name: "purge",
    title: "Purge dead letters",
    description:
      "Delete a queue's dead letters for good, oldest first. Without max (or max 0) and older_than_ms it " +
      "deletes the whole dead-letter queue. Returns {purged:n}.",
    input: {
      queue,
      max: z.number().int().min(0).optional().describe("At most this many (0 or absent = all)."),
      older_than_ms: olderThan,
    },
    annotations: DESTRUCTIVE,
    run: async (broker, a) => ({
      purged: await broker.purge(a.queue, { max: a.max ?? 0, olderThanMs: a.older_than_ms ?? 0 }),
    }),
  }),
  tool({
    name: "subscribe",
    title: "Subscribe to a topic",
    description:
      "Subscribe `name` to `topic`: every message sent to the topic whose filter matches is copied into the " +
      "queue `name` (created for it), to receive like any queue. `expr` is an expr-language boolean over " +
      'subject, subject_parts, properties, body_json, body_text, …, e.g. subject_parts[0] == "orders" && ' +
      'properties["region"] == "eu"; absent matches everything. Check it first with test_filter. Returns {ok:true}.',
    input: {
      topic: z.string().min(1).describe("Topic name (not an existing queue)."),
      name: z.string().min(1).describe("Subscription name, also its queue's name."),
      expr: z.string().optional().describe("Filter expression; absent matches every message."),
    },
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.subscribe(a.topic, a.name, a.expr ? { filter: a.expr } : {});
      return { ok: true };
    },
  }),
  tool({
    name: "list_subscriptions",
    title: "List subscriptions",
    description:
      "List every subscription: {subscriptions:[{topic, name, expr?, kind, paused}]}; no expr means match-all.",
    input: {},
    annotations: READ_ONLY,
    run: async (broker) => ({ subscriptions: (await broker.listSubscriptions()).map(subscriptionToWire) }),
  }),
  tool({
    name: "test_filter",
    title: "Test a filter",
    description:
      "Check a subscription filter expression and, given a sample message, whether it would match. Stores " +
      "nothing. Returns {valid, error?, ran, matched}: valid false with the compile error, or ran true with " +
      "matched (a runtime error means not routed).",
    input: {
      expr: z.string().describe("The filter expression."),
      message: sample.optional().describe("A sample message to run it on."),
    },
    annotations: READ_ONLY,
    run: async (broker, a) => {
      const r = await broker.testFilter(a.expr, a.message ? filterSample(a.message) : undefined);
      return { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched };
    },
  }),
];
