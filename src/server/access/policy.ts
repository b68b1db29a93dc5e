import type { Broker } from "../../contract/broker.js";
import type { BrowseOptions, FlowNode, WorkerInfo } from "../../contract/job-service.js";
import type { Need } from "./scopes.js";

/**
 * The broker's callable operations: everything but `close` and `consume` (a loop over the others,
 * run by a client, never by a request).
 */
export type Operation = Exclude<keyof Broker, "close" | "consume">;

const MANAGE: Need = { kind: "manage" };
const MONITOR: Need = { kind: "monitor" };
const CLIENT: Need = { kind: "client" };
const send = (name: unknown): Need => ({ kind: "send", names: [String(name ?? "")] });
const listen = (name: unknown): Need => ({ kind: "listen", names: [String(name ?? "")] });
const listenAll = (names: unknown): Need => ({
  kind: "listen",
  names: Array.isArray(names) ? names.map(String) : [],
});

/**
 * What each operation needs, from its arguments (the same for an RPC, an MCP tool and the
 * console, which all reach the broker through these). Operations that name messages only by
 * sequence number (getMessages, messageErrors, awaitSettled) are checked on the queues those
 * messages are in: see `guardBroker`.
 */
export const POLICY: Record<Exclude<Operation, BySeq>, (args: unknown[]) => Need> = {
  // Administration: manage.
  createQueue: () => MANAGE,
  deleteQueue: () => MANAGE,
  redrive: () => MANAGE,
  purge: () => MANAGE,
  subscribe: () => MANAGE,
  unsubscribe: () => MANAGE,
  pauseSubscription: () => MANAGE,
  resumeSubscription: () => MANAGE,
  pauseQueue: () => MANAGE,
  resumeQueue: () => MANAGE,
  deleteSettled: () => MANAGE,
  removeMessages: () => MANAGE,
  subscribeTask: () => MANAGE,
  subscribeLog: () => MANAGE,
  declareTopic: () => MANAGE,
  // Read-only views without message bodies: monitor.
  listQueues: () => MONITOR,
  listSubscriptions: () => MONITOR,
  stats: () => MONITOR,
  status: () => MONITOR,
  testFilter: () => MONITOR,
  listWorkers: () => MONITOR,
  listDeclaredTopics: () => MONITOR,
  topicStats: () => MONITOR,
  topicLogStats: () => MONITOR,
  readiness: () => MONITOR,
  // Producing: send on the queue or topic.
  send: ([queue]) => send(queue),
  schedule: ([queue]) => send(queue),
  cancel: ([queue]) => send(queue),
  cancelMessage: ([queue]) => send(queue),
  // Runs a delayed message now: no more than its producer could have done by sending it undelayed.
  promoteMessages: ([queue]) => send(queue),
  publish: ([topic]) => send(topic),
  // Consuming: listen on the queue (or topic log).
  receive: ([queue]) => listen(queue),
  receiveDeferred: ([queue]) => listen(queue),
  peek: ([queue]) => listen(queue),
  complete: ([queue]) => listen(queue),
  completeBatch: ([queue]) => listen(queue),
  abandon: ([queue]) => listen(queue),
  reject: ([queue]) => listen(queue),
  defer: ([queue]) => listen(queue),
  renew: ([queue]) => listen(queue),
  renewBatch: ([queue]) => listen(queue),
  setProgress: ([queue]) => listen(queue),
  receiveAny: ([queues]) => listenAll(queues),
  browse: ([options]) => listenAll((options as BrowseOptions | undefined)?.queues),
  // A worker registers for the queues it listens on; one with none only sweeps stale workers.
  heartbeat: ([worker]) => {
    const queues = (worker as WorkerInfo | undefined)?.queues ?? [];
    return queues.length > 0 ? listenAll(queues) : CLIENT;
  },
  readTopic: ([topic]) => listen(topic),
  ackTopic: ([topic]) => listen(topic),
  leaseTopic: ([topic]) => listen(topic),
  ackMessage: ([topic]) => listen(topic),
  nackMessage: ([topic]) => listen(topic),
  // A worker's housekeeping (its own registration, named leases, the ephemeral-subscription sweep).
  removeWorker: () => CLIENT,
  acquireLock: () => CLIENT,
  releaseLock: () => CLIENT,
  reapSubscriptions: () => CLIENT,
  // Flows: a flow is sent into each of its nodes' queues; releasing parents is worker housekeeping.
  sendFlow: ([nodes]) => ({
    kind: "send",
    names: Array.isArray(nodes) ? nodes.map((n) => String((n as FlowNode | undefined)?.queue ?? "")) : [],
  }),
  releaseDependents: () => CLIENT,
  // A job's log is written by its lock holder; the event log is written by workers, read by monitors.
  appendMessageLog: ([queue]) => listen(queue),
  appendEvents: () => CLIENT,
  readEvents: () => MONITOR,
  // Job metrics are counted by workers, read by monitors; a debounced send is a send.
  addMetrics: () => CLIENT,
  readMetrics: () => MONITOR,
  sendDebounced: ([queue]) => send(queue),
};

/** Operations that name messages by sequence number only. */
export type BySeq = "getMessages" | "messageErrors" | "awaitSettled" | "dependencies" | "messageLog";

/** Administrative changes: each is written to the audit log with who, what and how it went. */
export const AUDITED: ReadonlySet<Operation> = new Set<Operation>([
  "createQueue",
  "deleteQueue",
  "redrive",
  "purge",
  "subscribe",
  "unsubscribe",
  "pauseSubscription",
  "resumeSubscription",
  "pauseQueue",
  "resumeQueue",
  "deleteSettled",
  "removeMessages",
  "subscribeTask",
  "subscribeLog",
  "declareTopic",
]);
