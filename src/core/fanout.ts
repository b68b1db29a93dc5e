import type { TopicLogMessage } from "../contract/topic-service.js";
import type { FilterMessage } from "../filter/index.js";
import type { PreparedMessage } from "./outgoing.js";
import type { Target } from "./subscription-rows.js";

/** The message property that holds a job's structured notes (canonical JSON). */
export const NOTES_PROPERTY = "notes";

/**
 * A publish's unique key as one task subscription's delivery carries it:
 * `{key}::{len(topic)}:{len(name)}:{topic}{name}` (lengths in UTF-8 bytes, so the salt is
 * injective). Several task subscriptions may deliver to one queue; unsalted, their keys would
 * collapse the fan-out.
 */
export function saltKey(key: string, topic: string, name: string): string {
  return `${key}::${Buffer.byteLength(topic)}:${Buffer.byteLength(name)}:${topic}${name}`;
}

/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) out[k] = sort((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

/** The publisher's notes merged with `topic` and `subscription`, as canonical JSON. */
export function stampedNotes(notes: string | undefined, topic: string, name: string): string {
  let parsed: Record<string, unknown> = {};
  if (notes) {
    try {
      const v = JSON.parse(notes) as unknown;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) parsed = v as Record<string, unknown>;
    } catch {
      // not JSON: replaced by the stamp alone
    }
  }
  return canonicalJson({ ...parsed, topic, subscription: name });
}

/**
 * A task subscription's job for a published message: the task as subject, the notes stamped with
 * topic and subscription, the unique key salted, and each delivery setting resolved (the publish's
 * own, else the subscription's, else the queue's: 0 here).
 */
export function taskDelivery(m: PreparedMessage, t: Target): PreparedMessage {
  const properties = {
    ...m.properties,
    [NOTES_PROPERTY]: stampedNotes(m.properties?.[NOTES_PROPERTY], t.topic, t.name),
  };
  return {
    ...m,
    subject: t.task ?? "",
    properties,
    propertiesJson: JSON.stringify(properties),
    priority: m.prioritySet ? m.priority : (t.priority ?? 0),
    prioritySet: true,
    maxDeliveries: m.maxDeliveries > 0 ? m.maxDeliveries : (t.maxDeliveries ?? 0),
    lockDurationMs: m.lockDurationMs > 0 ? m.lockDurationMs : (t.lockDurationMs ?? 0),
    uniqueKey: m.uniqueKey === null ? null : saltKey(m.uniqueKey, t.topic, t.name),
  };
}

/** A publish's copies in subscription creation order (time, then insertion position). */
export function byCreation<D extends { subscription: string }>(deliveries: D[], targets: Target[]): D[] {
  if (deliveries.length < 2) return deliveries;
  const rank = new Map(targets.map((t) => [t.name, t]));
  return deliveries.sort((a, b) => {
    const x = rank.get(a.subscription);
    const y = rank.get(b.subscription);
    if (!x || !y) return 0;
    return x.createdAt - y.createdAt || x.position - y.position;
  });
}

/** A stored log row. */
export interface TopicMessageRow {
  id: number;
  topic: string;
  created_at: number;
  expires_at: number;
  message_id: string | null;
  correlation_id: string | null;
  content_type: string | null;
  subject: string | null;
  properties: string | null;
  body: Buffer;
  attempts?: number;
}

export function topicMessage(r: TopicMessageRow): TopicLogMessage {
  const m: TopicLogMessage = { id: r.id, topic: r.topic, body: r.body, enqueuedAt: r.created_at };
  if (r.message_id) m.messageId = r.message_id;
  if (r.correlation_id) m.correlationId = r.correlation_id;
  if (r.content_type) m.contentType = r.content_type;
  if (r.subject) m.subject = r.subject;
  if (r.properties) m.properties = JSON.parse(r.properties) as Record<string, string>;
  if (r.expires_at > 0) m.expiresAt = r.expires_at;
  if (r.attempts !== undefined) m.attempts = r.attempts;
  return m;
}

/** What a filter sees of a stored log message (as it saw it at publish). */
export function logFilterMessage(r: TopicMessageRow): FilterMessage {
  return {
    subject: r.subject ?? undefined,
    properties: r.properties ? (JSON.parse(r.properties) as Record<string, string>) : undefined,
    messageId: r.message_id ?? undefined,
    correlationId: r.correlation_id ?? undefined,
    contentType: r.content_type ?? undefined,
    body: r.body,
    enqueuedAt: r.created_at,
    visibleAt: r.created_at,
  };
}

/** Log rows examined per step of a filtered read (the read goes on until its limit or the log's end). */
export const FILTERED_READ_BATCH = 500;
/** The most log rows one compaction pass deletes. */
export const TOPIC_PURGE_LIMIT = 10_000;
/** Defaults of the ephemeral-subscription reaper. */
export const EPHEMERAL_LIVENESS_MS = 30_000;
export const EPHEMERAL_GRACE_MS = 60_000;
/** Defaults of reads and leases. */
export const DEFAULT_TOPIC_READ = 100;
export const MAX_TOPIC_READ = 1000;
export const DEFAULT_VISIBILITY_MS = 30_000;
