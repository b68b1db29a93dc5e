import type { z } from "zod";
import * as admin from "./admin-service.js";
import * as flows from "./job-flows.js";
import * as jobs from "./job-service.js";
import { Empty, SettleResponse } from "./primitives.js";
import * as queue from "./queue-service.js";
import * as topics from "./topic-service.js";

/** One RPC: `POST /mqlite.v1.<service>/<method>`. */
export interface RpcRoute<
  Req extends z.ZodType | null = z.ZodType | null,
  Res extends z.ZodType = z.ZodType,
> {
  service: "QueueService" | "AdminService" | "JobService" | "TopicService";
  method: string;
  /** The request schema, or null when the body is ignored (ListQueues, ListSubscriptions, Status). */
  request: Req;
  response: Res;
  summary: string;
  /** Not in the original's 22 routes. */
  extension?: true;
}

const rpc = <Req extends z.ZodType | null, Res extends z.ZodType>(
  service: RpcRoute["service"],
  method: string,
  request: Req,
  response: Res,
  summary: string,
  extension?: true,
): RpcRoute<Req, Res> => ({ service, method, request, response, summary, ...(extension && { extension }) });

/**
 * Every RPC, in registration order: the original's 22 (spec §1.6), then our extensions. The
 * discovery card lists them in this order; server, client and /openapi.json all read this table.
 */
export const ROUTES = {
  send: rpc(
    "QueueService",
    "Send",
    queue.SendRequest,
    queue.SendResponse,
    "Send to a queue or publish to a topic.",
  ),
  receive: rpc(
    "QueueService",
    "Receive",
    queue.ReceiveRequest,
    queue.ReceiveResponse,
    "Claim messages, long-polling up to wait_time_ms.",
  ),
  complete: rpc(
    "QueueService",
    "Complete",
    queue.SettleRequest,
    SettleResponse,
    "Settle a locked message as done.",
  ),
  completeBatch: rpc(
    "QueueService",
    "CompleteBatch",
    queue.CompleteBatchRequest,
    queue.CompleteBatchResponse,
    "Complete many; each item succeeds or fails on its own.",
  ),
  renewBatch: rpc(
    "QueueService",
    "RenewBatch",
    queue.RenewBatchRequest,
    queue.RenewBatchResponse,
    "Renew up to 512 locks.",
  ),
  abandon: rpc(
    "QueueService",
    "Abandon",
    queue.SettleRequest,
    SettleResponse,
    "Release a lock for redelivery.",
  ),
  reject: rpc("QueueService", "Reject", queue.SettleRequest, SettleResponse, "Dead-letter a locked message."),
  defer: rpc("QueueService", "Defer", queue.SettleRequest, SettleResponse, "Set a locked message aside."),
  receiveDeferred: rpc(
    "QueueService",
    "ReceiveDeferred",
    queue.ReceiveDeferredRequest,
    queue.ReceiveResponse,
    "Claim deferred messages by sequence number.",
  ),
  renew: rpc(
    "QueueService",
    "Renew",
    queue.SettleRequest,
    SettleResponse,
    "Extend a lock by the queue's lock duration.",
  ),
  schedule: rpc(
    "QueueService",
    "Schedule",
    queue.SendRequest,
    queue.SendResponse,
    "Send with a delivery time in the future.",
  ),
  cancel: rpc(
    "QueueService",
    "Cancel",
    queue.CancelRequest,
    SettleResponse,
    "Delete a scheduled, never-delivered message.",
  ),
  peek: rpc(
    "QueueService",
    "Peek",
    queue.PeekRequest,
    queue.PeekResponse,
    "Read messages without locking them.",
  ),
  stats: rpc("QueueService", "Stats", queue.MetricsRequest, queue.MetricsResponse, "Counts by state."),
  createQueue: rpc(
    "AdminService",
    "CreateQueue",
    admin.CreateQueueRequest,
    Empty,
    "Create a queue, or replace its whole config.",
  ),
  subscribe: rpc(
    "AdminService",
    "Subscribe",
    admin.SubscribeRequest,
    Empty,
    "Subscribe a backing queue to a topic, with an optional filter.",
  ),
  listQueues: rpc(
    "AdminService",
    "ListQueues",
    null,
    admin.ListQueuesResponse,
    "Every queue, ordered by name.",
  ),
  listSubscriptions: rpc(
    "AdminService",
    "ListSubscriptions",
    null,
    admin.ListSubscriptionsResponse,
    "Every subscription, ordered by topic then name.",
  ),
  testFilter: rpc(
    "AdminService",
    "TestFilter",
    admin.TestFilterRequest,
    admin.TestFilterResponse,
    "Compile a filter and optionally run it on a sample message.",
  ),
  redrive: rpc(
    "AdminService",
    "Redrive",
    admin.RedriveRequest,
    admin.RedriveResponse,
    "Move dead letters back to active.",
  ),
  purge: rpc("AdminService", "Purge", admin.PurgeRequest, admin.PurgeResponse, "Delete dead letters."),
  status: rpc("AdminService", "Status", null, admin.StatusResponse, "The broker's status."),
  deleteQueue: rpc(
    "AdminService",
    "DeleteQueue",
    admin.QueueRef,
    Empty,
    "Delete a plain queue and its messages.",
    true,
  ),
  unsubscribe: rpc(
    "AdminService",
    "Unsubscribe",
    admin.SubscriptionRef,
    Empty,
    "Remove a subscription with its backing queue.",
    true,
  ),
  pauseSubscription: rpc(
    "AdminService",
    "PauseSubscription",
    admin.SubscriptionRef,
    Empty,
    "Stop a subscription from receiving copies.",
    true,
  ),
  resumeSubscription: rpc(
    "AdminService",
    "ResumeSubscription",
    admin.SubscriptionRef,
    Empty,
    "Let a paused subscription receive copies again.",
    true,
  ),
  // The job face's engine capabilities (JobService of the contract).
  pauseQueue: rpc("JobService", "PauseQueue", admin.QueueRef, Empty, "Stop claims from a queue.", true),
  resumeQueue: rpc(
    "JobService",
    "ResumeQueue",
    admin.QueueRef,
    Empty,
    "Resume claims from a paused queue.",
    true,
  ),
  receiveAny: rpc(
    "JobService",
    "ReceiveAny",
    jobs.ReceiveAnyRequest,
    queue.ReceiveResponse,
    "Claim from several queues in order, long-polling on all, with claim gates.",
    true,
  ),
  cancelMessage: rpc(
    "JobService",
    "CancelMessage",
    jobs.CancelMessageRequest,
    jobs.CancelMessageResponse,
    "Cancel a waiting message, or ask the holder of a locked one to.",
    true,
  ),
  setProgress: rpc(
    "JobService",
    "SetProgress",
    jobs.SetProgressRequest,
    SettleResponse,
    "Record the lock holder's progress (0..100).",
    true,
  ),
  getMessages: rpc(
    "JobService",
    "GetMessages",
    jobs.GetMessagesRequest,
    jobs.MessageRecordsResponse,
    "Messages by sequence number, whatever their queue and state.",
    true,
  ),
  browse: rpc(
    "JobService",
    "Browse",
    jobs.BrowseRequest,
    jobs.MessageRecordsResponse,
    "List stored messages across queues.",
    true,
  ),
  messageErrors: rpc(
    "JobService",
    "MessageErrors",
    jobs.MessageErrorsRequest,
    jobs.MessageErrorsResponse,
    "Every failed delivery of a message, oldest first.",
    true,
  ),
  awaitSettled: rpc(
    "JobService",
    "AwaitSettled",
    jobs.AwaitSettledRequest,
    jobs.AwaitSettledResponse,
    "Wait until one of the messages is settled.",
    true,
  ),
  deleteSettled: rpc(
    "JobService",
    "DeleteSettled",
    jobs.DeleteSettledRequest,
    jobs.DeleteSettledResponse,
    "Delete settled messages of a queue.",
    true,
  ),
  promoteMessages: rpc(
    "JobService",
    "PromoteMessages",
    jobs.SeqNumbersOfQueueRequest,
    jobs.PromoteMessagesResponse,
    "Make scheduled messages of a queue claimable now.",
    true,
  ),
  removeMessages: rpc(
    "JobService",
    "RemoveMessages",
    jobs.SeqNumbersOfQueueRequest,
    jobs.RemoveMessagesResponse,
    "Delete messages of a queue in any state but locked.",
    true,
  ),
  heartbeat: rpc(
    "JobService",
    "Heartbeat",
    jobs.HeartbeatRequest,
    jobs.HeartbeatResponse,
    "Record a worker's heartbeat; reap stale workers.",
    true,
  ),
  listWorkers: rpc(
    "JobService",
    "ListWorkers",
    null,
    jobs.ListWorkersResponse,
    "Every registered worker.",
    true,
  ),
  removeWorker: rpc(
    "JobService",
    "RemoveWorker",
    jobs.RemoveWorkerRequest,
    jobs.RemoveWorkerResponse,
    "Unregister a worker.",
    true,
  ),
  acquireLock: rpc(
    "JobService",
    "AcquireLock",
    jobs.AcquireLockRequest,
    jobs.AcquireLockResponse,
    "Take or renew a named lease.",
    true,
  ),
  releaseLock: rpc(
    "JobService",
    "ReleaseLock",
    jobs.ReleaseLockRequest,
    jobs.ReleaseLockResponse,
    "Release a named lease.",
    true,
  ),
  // Job topics (TopicService of the contract).
  subscribeTask: rpc(
    "TopicService",
    "SubscribeTask",
    topics.SubscribeTaskRequest,
    Empty,
    "Create or update a task subscription.",
    true,
  ),
  subscribeLog: rpc(
    "TopicService",
    "SubscribeLog",
    topics.SubscribeLogRequest,
    Empty,
    "Create a log subscription, or update its filter.",
    true,
  ),
  publish: rpc(
    "TopicService",
    "Publish",
    topics.PublishRequest,
    topics.PublishResponse,
    "Publish one message and return every copy.",
    true,
  ),
  declareTopic: rpc(
    "TopicService",
    "DeclareTopic",
    topics.DeclareTopicRequest,
    Empty,
    "Declare a topic (its log keeps publishes).",
    true,
  ),
  listDeclaredTopics: rpc(
    "TopicService",
    "ListDeclaredTopics",
    null,
    topics.ListDeclaredTopicsResponse,
    "Declared topics, by name.",
    true,
  ),
  readTopic: rpc(
    "TopicService",
    "ReadTopic",
    topics.ReadTopicRequest,
    topics.TopicMessagesResponse,
    "The log messages after a log subscription's cursor.",
    true,
  ),
  ackTopic: rpc(
    "TopicService",
    "AckTopic",
    topics.TopicCursorRequest,
    topics.TopicOkResponse,
    "Move a log subscription's cursor.",
    true,
  ),
  leaseTopic: rpc(
    "TopicService",
    "LeaseTopic",
    topics.LeaseTopicRequest,
    topics.TopicMessagesResponse,
    "Lease log messages one by one.",
    true,
  ),
  ackMessage: rpc(
    "TopicService",
    "AckMessage",
    topics.TopicCursorRequest,
    topics.TopicOkResponse,
    "Acknowledge a leased log message.",
    true,
  ),
  nackMessage: rpc(
    "TopicService",
    "NackMessage",
    topics.TopicCursorRequest,
    topics.TopicOkResponse,
    "Give a leased log message back.",
    true,
  ),
  topicStats: rpc(
    "TopicService",
    "TopicStats",
    topics.TopicRef,
    topics.TopicStatsResponse,
    "The backlog of every task subscription.",
    true,
  ),
  topicLogStats: rpc(
    "TopicService",
    "TopicLogStats",
    topics.TopicRef,
    topics.TopicLogStatsResponse,
    "The lag of every log subscription.",
    true,
  ),
  reapSubscriptions: rpc(
    "TopicService",
    "ReapSubscriptions",
    topics.ReapSubscriptionsRequest,
    topics.ReapSubscriptionsResponse,
    "Remove ephemeral subscriptions whose worker stopped heartbeating.",
    true,
  ),
  // Flows, message logs and the event log (JobService of the contract, continued).
  sendFlow: rpc(
    "JobService",
    "SendFlow",
    flows.SendFlowRequest,
    flows.SendFlowResponse,
    "Store a tree of messages in one transaction; parents wait for their children.",
    true,
  ),
  releaseDependents: rpc(
    "JobService",
    "ReleaseDependents",
    flows.ReleaseDependentsRequest,
    flows.ReleaseDependentsResponse,
    "Resolve settled children; release or fail the parents they leave with none open.",
    true,
  ),
  dependencies: rpc(
    "JobService",
    "Dependencies",
    flows.DependenciesRequest,
    flows.DependenciesResponse,
    "The children of a flow's message.",
    true,
  ),
  appendMessageLog: rpc(
    "JobService",
    "AppendMessageLog",
    flows.AppendMessageLogRequest,
    flows.AppendMessageLogResponse,
    "Append lines to a locked message's log.",
    true,
  ),
  messageLog: rpc(
    "JobService",
    "MessageLog",
    flows.MessageLogRequest,
    flows.MessageLogResponse,
    "A message's log lines, oldest first.",
    true,
  ),
  appendEvents: rpc(
    "JobService",
    "AppendEvents",
    flows.AppendEventsRequest,
    Empty,
    "Append events to the event log.",
    true,
  ),
  readEvents: rpc(
    "JobService",
    "ReadEvents",
    flows.ReadEventsRequest,
    flows.ReadEventsResponse,
    "Events after a cursor, oldest first.",
    true,
  ),
  addMetrics: rpc(
    "JobService",
    "AddMetrics",
    flows.AddMetricsRequest,
    Empty,
    "Count settled jobs in the current minute's buckets.",
    true,
  ),
  readMetrics: rpc(
    "JobService",
    "ReadMetrics",
    flows.ReadMetricsRequest,
    flows.ReadMetricsResponse,
    "Per-minute counts of settled jobs in a range, oldest first.",
    true,
  ),
  sendDebounced: rpc(
    "JobService",
    "SendDebounced",
    flows.SendDebouncedRequest,
    flows.SendDebouncedResponse,
    "Send through a debounce window: move its waiting message, or store one.",
    true,
  ),
} as const;

export type Routes = typeof ROUTES;
export type RouteName = keyof Routes;

/** The decoded request of a route (undefined when the body is ignored). */
export type RequestOf<K extends RouteName> = Routes[K]["request"] extends z.ZodType
  ? z.output<Routes[K]["request"]>
  : undefined;
/** What a client sends for a route. */
export type RequestInputOf<K extends RouteName> = Routes[K]["request"] extends z.ZodType
  ? z.input<Routes[K]["request"]>
  : undefined;
/** The response body of a route. */
export type ResponseOf<K extends RouteName> = z.output<Routes[K]["response"]>;

/** `QueueService/Send`: the label of the RPC-latency histogram and the access log. */
export function rpcName(route: RpcRoute): string {
  return `${route.service}/${route.method}`;
}

/** `/mqlite.v1.QueueService/Send`. */
export function rpcPath(route: RpcRoute): string {
  return `/mqlite.v1.${rpcName(route)}`;
}

/** Whether a path is in the RPC namespace (`/mqlite.v1.…`), a known RPC or not. */
export function isRpcPath(path: string): boolean {
  return path.startsWith("/mqlite.v1.");
}

/** Every route name in registration order. */
export const ROUTE_NAMES = Object.keys(ROUTES) as RouteName[];
