import { z } from "zod";
import { WireMessage } from "./message.js";
import { int, list, str } from "./primitives.js";
import { WireQueueConfig, WireQueueInfo } from "./queue-config.js";

// Request and response bodies of `mqlite.v1.AdminService` (spec §1.9), with our extensions.

export const CreateQueueRequest = z
  .strictObject({ name: str(), config: WireQueueConfig.nullish() })
  .meta({ id: "CreateQueueRequest" });

export const FilterJSON = z.strictObject({ expr: str() }).meta({ id: "Filter" });

export const SubscribeRequest = z
  .strictObject({
    topic: str(),
    name: str(),
    filter: FilterJSON.nullish(),
    config: WireQueueConfig.nullish().meta({
      description: "Extension: the backing queue's config when it is created (a re-subscribe keeps it).",
    }),
  })
  .meta({ id: "SubscribeRequest" });

export const ListQueuesResponse = z
  .strictObject({ queues: z.array(WireQueueInfo) })
  .meta({ id: "ListQueuesResponse" });

/** The task and log fields of a ListSubscriptions entry (our extension, see TopicService). */
const subscriptionDetailsShape = {
  task: z.string().optional(),
  queue: z.string().optional(),
  durable: z.boolean().optional(),
  owner: z.string().optional(),
  priority: z.int().optional(),
  max_delivery_count: z.int().optional(),
  lock_duration_ms: z.int().optional(),
  cursor: z.int().optional(),
};

export const WireSubscriptionInfo = z
  .strictObject({
    topic: z.string(),
    name: z.string(),
    expr: z.string().optional().meta({ description: "Absent means match-all." }),
    kind: z.string().meta({ description: "Extension: queue, task or log." }),
    paused: z.boolean().meta({ description: "Extension: a paused subscription receives no copies." }),
    created_at_ms: z.int().optional().meta({ description: "Extension." }),
    ...subscriptionDetailsShape,
  })
  .meta({ id: "SubscriptionInfo" });

export const ListSubscriptionsResponse = z
  .strictObject({ subscriptions: z.array(WireSubscriptionInfo) })
  .meta({ id: "ListSubscriptionsResponse" });

export const TestFilterRequest = z
  .strictObject({ expr: str(), message: WireMessage.nullish() })
  .meta({ id: "TestFilterRequest" });

export const TestFilterResponse = z
  .strictObject({
    valid: z.boolean(),
    error: z.string().optional(),
    ran: z.boolean(),
    matched: z.boolean(),
  })
  .meta({ id: "TestFilterResponse" });

export const RedriveRequest = z
  .strictObject({
    queue: str(),
    target: str().meta({ description: "Empty or equal to queue: in place." }),
    max: int().meta({ description: "0 = all." }),
    older_than_ms: int().meta({ description: "0 = any age." }),
    rate_per_sec: int().meta({ description: "0 = one transaction; else chunks of this size, 1 s apart." }),
    seq_numbers: list(z.int()).meta({ description: "Extension: only these dead letters." }),
  })
  .meta({ id: "RedriveRequest" });

export const RedriveResponse = z.strictObject({ moved: z.int() }).meta({ id: "RedriveResponse" });

export const PurgeRequest = z
  .strictObject({
    queue: str(),
    max: int().meta({ description: "0 = all." }),
    older_than_ms: int().meta({ description: "0 = any age." }),
  })
  .meta({ id: "PurgeRequest" });

export const PurgeResponse = z.strictObject({ purged: z.int() }).meta({ id: "PurgeResponse" });

export const StatusResponse = z
  .strictObject({
    version: z.string(),
    backend: z.string(),
    remote: z.boolean(),
    location: z.string(),
    schema_version: z.string(),
    ping_ms: z.int().meta({ description: "Whole milliseconds of a `SELECT 1`; -1 when it failed." }),
    db_size_bytes: z.int(),
    queues: z.int(),
    subscriptions: z.int(),
    uptime_ms: z.int(),
    auth: z.boolean(),
    sync: z.string().optional().meta({
      description: "Extension: the durability setting (SQLite's synchronous: off, normal, full, extra).",
    }),
  })
  .meta({ id: "StatusResponse" });

/** A queue by name (DeleteQueue, PauseQueue, ResumeQueue). */
export const QueueRef = z.strictObject({ name: str() }).meta({ id: "QueueRef" });

export const SubscriptionRef = z.strictObject({ topic: str(), name: str() }).meta({ id: "SubscriptionRef" });
