import { z } from "zod";
import type {
  EngineDeclaredTopic,
  EngineTopicLogStat,
  PublishResult,
  TopicBacklog,
  TopicLogMessage,
} from "../contract/topic-service.js";
import { FilterJSON } from "./admin-service.js";
import { decodeBase64, encodeBase64 } from "./base64.js";
import { WireMessage } from "./message.js";
import { bool, int, maxBytes, str } from "./primitives.js";
import { stringMap } from "./string-map.js";

// `mqlite.v1.TopicService` (our extension): job topics (task and log subscriptions, the topic log,
// declared topics, per-message leases). Same conventions as the original's services.

export const SubscribeTaskRequest = z
  .strictObject({
    topic: str(),
    name: str(),
    task: str(),
    queue: str(),
    filter: FilterJSON.nullish(),
    durable: bool().meta({ description: "Default true; false needs an owner (a worker id)." }),
    owner: str(),
    priority: int(),
    max_delivery_count: int(),
    lock_duration_ms: int(),
  })
  .meta({ id: "SubscribeTaskRequest" });

export const SubscribeLogRequest = z
  .strictObject({ topic: str(), name: str(), filter: FilterJSON.nullish() })
  .meta({ id: "SubscribeLogRequest" });

export const PublishRequest = z
  .strictObject({
    topic: str(),
    message: WireMessage.nullish(),
    priority: int().meta({ description: "The deliveries' priority, even 0 (overrides the subscriptions')." }),
    scheduled_enqueue_time_ms: int(),
    ttl_ms: int(),
  })
  .meta({ id: "PublishRequest" });

export const DeliveryJSON = z
  .strictObject({
    subscription: z.string(),
    kind: z.enum(["queue", "task"]),
    queue: z.string(),
    seq_number: z.int(),
    duplicate: z.boolean().optional(),
  })
  .meta({ id: "Delivery" });

export const PublishResponse = z
  .strictObject({ deliveries: z.array(DeliveryJSON), log_id: z.int().optional() })
  .meta({ id: "PublishResponse" });

export const DeclareTopicRequest = z
  .strictObject({ name: str(), retention_ms: int().meta({ description: "Absent: keep until consumed." }) })
  .meta({ id: "DeclareTopicRequest" });

export const DeclaredTopicJSON = z
  .strictObject({ name: z.string(), retention_ms: z.int().optional(), created_at_ms: z.int() })
  .meta({ id: "EngineDeclaredTopic" });

export const ListDeclaredTopicsResponse = z
  .strictObject({ topics: z.array(DeclaredTopicJSON) })
  .meta({ id: "ListDeclaredTopicsResponse" });

export const ReadTopicRequest = z
  .strictObject({
    topic: str(),
    name: str(),
    limit: int().meta({ description: "Absent: 100; ≤0 reads nothing; at most 1000." }),
    max_bytes: maxBytes(),
  })
  .meta({ id: "ReadTopicRequest" });

export const LeaseTopicRequest = z
  .strictObject({ topic: str(), name: str(), limit: int(), visibility_ms: int(), max_bytes: maxBytes() })
  .meta({ id: "LeaseTopicRequest" });

export const TopicMessageJSON = z
  .strictObject({
    id: z.int(),
    topic: z.string(),
    body: z.string().optional(),
    message_id: z.string().optional(),
    correlation_id: z.string().optional(),
    content_type: z.string().optional(),
    subject: z.string().optional(),
    properties: stringMap().optional(),
    enqueued_at_ms: z.int(),
    expires_at_ms: z.int().optional(),
    attempts: z.int().optional(),
  })
  .meta({ id: "TopicLogMessage" });

export const TopicMessagesResponse = z
  .strictObject({ messages: z.array(TopicMessageJSON) })
  .meta({ id: "TopicMessagesResponse" });

export const TopicCursorRequest = z
  .strictObject({ topic: str(), name: str(), id: int() })
  .meta({ id: "TopicCursorRequest" });

export const TopicOkResponse = z.strictObject({ ok: z.boolean() }).meta({ id: "TopicOkResponse" });

export const TopicRef = z.strictObject({ topic: str() }).meta({ id: "TopicRef" });

export const TopicBacklogJSON = z
  .strictObject({
    topic: z.string(),
    subscription: z.string(),
    task: z.string(),
    queue: z.string(),
    paused: z.boolean(),
    durable: z.boolean(),
    pending: z.int(),
    running: z.int(),
    dead: z.int(),
    oldest_pending_at_ms: z.int().optional(),
  })
  .meta({ id: "TopicBacklog" });

export const TopicStatsResponse = z
  .strictObject({ subscriptions: z.array(TopicBacklogJSON) })
  .meta({ id: "TopicStatsResponse" });

export const TopicLogStatJSON = z
  .strictObject({
    topic: z.string(),
    subscription: z.string(),
    cursor: z.int().optional(),
    lag: z.int(),
    oldest_unacked_at_ms: z.int().optional(),
  })
  .meta({ id: "EngineTopicLogStat" });

export const TopicLogStatsResponse = z
  .strictObject({ subscriptions: z.array(TopicLogStatJSON) })
  .meta({ id: "TopicLogStatsResponse" });

export const ReapSubscriptionsRequest = z
  .strictObject({ liveness_ms: int(), grace_ms: int() })
  .meta({ id: "ReapSubscriptionsRequest" });

export const ReapSubscriptionsResponse = z
  .strictObject({ reaped: z.int() })
  .meta({ id: "ReapSubscriptionsResponse" });

type Out<S extends z.ZodType> = z.input<S>;

export function publishResultToWire(r: PublishResult): Out<typeof PublishResponse> {
  return {
    deliveries: r.deliveries.map((d) => ({
      subscription: d.subscription,
      kind: d.kind,
      queue: d.queue,
      seq_number: d.seqNumber,
      ...(d.duplicate && { duplicate: true }),
    })),
    ...(r.logId !== undefined && { log_id: r.logId }),
  };
}

export function publishResultFromWire(w: z.output<typeof PublishResponse>): PublishResult {
  const r: PublishResult = {
    deliveries: w.deliveries.map((d) => ({
      subscription: d.subscription,
      kind: d.kind,
      queue: d.queue,
      seqNumber: d.seq_number,
      ...(d.duplicate && { duplicate: true }),
    })),
  };
  if (w.log_id !== undefined) r.logId = w.log_id;
  return r;
}

export function topicMessageToWire(m: TopicLogMessage): Out<typeof TopicMessageJSON> {
  return {
    id: m.id,
    topic: m.topic,
    ...(m.body.length > 0 && { body: encodeBase64(m.body) }),
    ...(m.messageId && { message_id: m.messageId }),
    ...(m.correlationId && { correlation_id: m.correlationId }),
    ...(m.contentType && { content_type: m.contentType }),
    ...(m.subject && { subject: m.subject }),
    ...(m.properties && { properties: m.properties }),
    enqueued_at_ms: m.enqueuedAt,
    ...(m.expiresAt !== undefined && { expires_at_ms: m.expiresAt }),
    ...(m.attempts !== undefined && { attempts: m.attempts }),
  };
}

export function topicMessageFromWire(w: z.output<typeof TopicMessageJSON>): TopicLogMessage {
  const m: TopicLogMessage = {
    id: w.id,
    topic: w.topic,
    body: w.body ? decodeBase64(w.body) : Buffer.alloc(0),
    enqueuedAt: w.enqueued_at_ms,
  };
  if (w.message_id) m.messageId = w.message_id;
  if (w.correlation_id) m.correlationId = w.correlation_id;
  if (w.content_type) m.contentType = w.content_type;
  if (w.subject) m.subject = w.subject;
  if (w.properties) m.properties = w.properties;
  if (w.expires_at_ms !== undefined) m.expiresAt = w.expires_at_ms;
  if (w.attempts !== undefined) m.attempts = w.attempts;
  return m;
}

export function declaredTopicToWire(d: EngineDeclaredTopic): Out<typeof DeclaredTopicJSON> {
  return {
    name: d.name,
    ...(d.retentionMs !== undefined && { retention_ms: d.retentionMs }),
    created_at_ms: d.createdAt,
  };
}

export function declaredTopicFromWire(w: z.output<typeof DeclaredTopicJSON>): EngineDeclaredTopic {
  const d: EngineDeclaredTopic = { name: w.name, createdAt: w.created_at_ms };
  if (w.retention_ms !== undefined) d.retentionMs = w.retention_ms;
  return d;
}

export function backlogToWire(b: TopicBacklog): Out<typeof TopicBacklogJSON> {
  const { oldestPendingAt, ...rest } = b;
  return { ...rest, ...(oldestPendingAt !== undefined && { oldest_pending_at_ms: oldestPendingAt }) };
}

export function backlogFromWire(w: z.output<typeof TopicBacklogJSON>): TopicBacklog {
  const { oldest_pending_at_ms, ...rest } = w;
  return { ...rest, ...(oldest_pending_at_ms !== undefined && { oldestPendingAt: oldest_pending_at_ms }) };
}

export function logStatToWire(s: EngineTopicLogStat): Out<typeof TopicLogStatJSON> {
  return {
    topic: s.topic,
    subscription: s.subscription,
    ...(s.cursor !== undefined && { cursor: s.cursor }),
    lag: s.lag,
    ...(s.oldestUnackedAt !== undefined && { oldest_unacked_at_ms: s.oldestUnackedAt }),
  };
}

export function logStatFromWire(w: z.output<typeof TopicLogStatJSON>): EngineTopicLogStat {
  const s: EngineTopicLogStat = { topic: w.topic, subscription: w.subscription, lag: w.lag };
  if (w.cursor !== undefined) s.cursor = w.cursor;
  if (w.oldest_unacked_at_ms !== undefined) s.oldestUnackedAt = w.oldest_unacked_at_ms;
  return s;
}
