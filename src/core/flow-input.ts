import { InvalidArgumentError } from "../contract/errors.js";
import type { DependencyOutcome, EventInput, FlowNode } from "../contract/job-service.js";
import {
  MAX_EVENT_DATA_BYTES,
  MAX_EVENTS_PER_CALL,
  MAX_FLOW_NODES,
  MAX_LOG_LINE_BYTES,
  MAX_LOG_LINES_PER_CALL,
} from "../contract/limits.js";
import type { MessageState } from "../contract/types.js";
import { type PreparedMessage, prepareMessages } from "./outgoing.js";
import { clampCount, integer } from "./validate.js";

/** A validated flow node: its message prepared, its parent checked to be an earlier node. */
export interface PreparedFlowNode {
  queue: string;
  message: PreparedMessage;
  parent: number | undefined;
  failParent: boolean;
}

/**
 * Checks a flow (the rules both dialects share): 1..MAX_FLOW_NODES nodes, each parent an earlier
 * node, so the list is a forest stored parents first.
 */
export function prepareFlow(nodes: FlowNode[], maxMessageBytes: number): PreparedFlowNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0)
    throw new InvalidArgumentError("mqlite: a flow needs at least one node");
  if (nodes.length > MAX_FLOW_NODES)
    throw new InvalidArgumentError(`mqlite: a flow has at most ${MAX_FLOW_NODES} nodes`);
  return nodes.map((n, i) => {
    if (n === null || typeof n !== "object")
      throw new InvalidArgumentError("mqlite: each flow node must be an object");
    if (typeof n.queue !== "string" || n.queue.length === 0)
      throw new InvalidArgumentError("mqlite: each flow node needs a queue");
    let parent: number | undefined;
    if (n.parent !== undefined && n.parent !== null) {
      parent = integer(n.parent, "parent");
      if (parent < 0 || parent >= i)
        throw new InvalidArgumentError("mqlite: a flow node's parent must be an earlier node");
    }
    const [message] = prepareMessages(n.message, maxMessageBytes);
    if (message!.uniqueKey !== null)
      throw new InvalidArgumentError("mqlite: a flow node takes no unique key");
    return { queue: n.queue, message: message!, parent, failParent: n.failParentOnFailure !== false };
  });
}

/** The nodes that have children (they wait), by index. */
export function waitingNodes(nodes: PreparedFlowNode[]): Set<number> {
  const out = new Set<number>();
  for (const n of nodes) if (n.parent !== undefined) out.add(n.parent);
  return out;
}

/** Checks the lines of `appendMessageLog`. */
export function checkLogLines(lines: string[]): string[] {
  if (!Array.isArray(lines)) throw new InvalidArgumentError("mqlite: lines must be a list");
  if (lines.length > MAX_LOG_LINES_PER_CALL)
    throw new InvalidArgumentError(`mqlite: at most ${MAX_LOG_LINES_PER_CALL} log lines per call`);
  for (const l of lines) {
    if (typeof l !== "string") throw new InvalidArgumentError("mqlite: a log line must be a string");
    if (Buffer.byteLength(l) > MAX_LOG_LINE_BYTES)
      throw new InvalidArgumentError(`mqlite: a log line is at most ${MAX_LOG_LINE_BYTES} bytes`);
  }
  return lines;
}

/** Checks the events of `appendEvents`. */
export function checkEvents(events: EventInput[]): EventInput[] {
  if (!Array.isArray(events)) throw new InvalidArgumentError("mqlite: events must be a list");
  if (events.length > MAX_EVENTS_PER_CALL)
    throw new InvalidArgumentError(`mqlite: at most ${MAX_EVENTS_PER_CALL} events per call`);
  for (const e of events) {
    if (e === null || typeof e !== "object")
      throw new InvalidArgumentError("mqlite: each event must be an object");
    if (typeof e.type !== "string" || e.type.length === 0 || e.type.length > 64)
      throw new InvalidArgumentError("mqlite: an event type is 1..64 characters");
    if (typeof e.data !== "string")
      throw new InvalidArgumentError("mqlite: an event's data must be a string");
    if (Buffer.byteLength(e.data) > MAX_EVENT_DATA_BYTES)
      throw new InvalidArgumentError(`mqlite: an event's data is at most ${MAX_EVENT_DATA_BYTES} bytes`);
  }
  return events;
}

/** The page bounds of `messageLog`. */
export function logPage(options: { offset?: number; limit?: number } = {}): {
  offset: number;
  limit: number;
} {
  const offset = Math.max(0, integer(options.offset, "offset"));
  return { offset, limit: clampCount(options.limit, 100, 1000) };
}

/** The limit of `readEvents` (0 reads nothing but the newest id). */
export function eventLimit(limit: number | undefined): number {
  if (limit === 0) return 0;
  return clampCount(limit, 100, 1000);
}

/** How a settled (or deleted: `undefined`) child ended, as its parent sees it. */
export function outcomeOf(state: MessageState | undefined): DependencyOutcome {
  if (state === "dead_lettered") return "failed";
  if (state === "cancelled") return "cancelled";
  return "completed";
}

/** The description of a parent dead-lettered for a child. */
export function childFailedDescription(
  child: number,
  outcome: DependencyOutcome,
  error: string | null,
): string {
  const what = outcome === "cancelled" ? "was cancelled" : "failed";
  return `child ${child} ${what}${error ? `: ${error}` : ""}`.slice(0, 4096);
}

/** The dead-letter reason of a parent failed by a child. */
export const CHILD_FAILED_REASON = "ChildFailed";
