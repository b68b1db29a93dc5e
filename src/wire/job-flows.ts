import { z } from "zod";
import type { Dependency, MessageLogPage, StoredEvent } from "../contract/job-service.js";
import { WireMessage } from "./message.js";
import { bool, int, list, str } from "./primitives.js";

// `mqlite.v1.JobService` (our extension), continued: flows, message logs and the event log.

export const FlowNodeJSON = z
  .strictObject({
    queue: str(),
    message: WireMessage,
    parent: int().meta({ description: "Index of an earlier node this one is a child of." }),
    fail_parent_on_failure: bool(),
  })
  .meta({ id: "FlowNode" });

export const SendFlowRequest = z.strictObject({ nodes: list(FlowNodeJSON) }).meta({ id: "SendFlowRequest" });

export const SendFlowResponse = z
  .strictObject({ seq_numbers: z.array(z.int()) })
  .meta({ id: "SendFlowResponse" });

export const ReleaseDependentsRequest = z
  .strictObject({
    seq_numbers: list(z.int()).meta({ description: "Absent: every open dependency." }),
  })
  .meta({ id: "ReleaseDependentsRequest" });

export const ReleaseDependentsResponse = z
  .strictObject({ released: z.int() })
  .meta({ id: "ReleaseDependentsResponse" });

export const DependenciesRequest = z.strictObject({ seq_number: int() }).meta({ id: "DependenciesRequest" });

export const DependencyJSON = z
  .strictObject({
    seq_number: z.int(),
    fail_parent_on_failure: z.boolean(),
    outcome: z.enum(["completed", "failed", "cancelled"]).nullish(),
    error: str(),
  })
  .meta({ id: "Dependency" });

export const DependenciesResponse = z
  .strictObject({ dependencies: z.array(DependencyJSON) })
  .meta({ id: "DependenciesResponse" });

export const AppendMessageLogRequest = z
  .strictObject({ queue: str(), seq_number: int(), lock_token: str(), lines: list(z.string()) })
  .meta({ id: "AppendMessageLogRequest" });

export const AppendMessageLogResponse = z
  .strictObject({ total: z.int() })
  .meta({ id: "AppendMessageLogResponse" });

export const MessageLogRequest = z
  .strictObject({ seq_number: int(), offset: int(), limit: int() })
  .meta({ id: "MessageLogRequest" });

export const MessageLogResponse = z
  .strictObject({
    entries: z.array(z.strictObject({ index: z.int(), at_ms: z.int(), text: z.string() })),
    total: z.int(),
  })
  .meta({ id: "MessageLogResponse" });

export const AppendEventsRequest = z
  .strictObject({ events: list(z.strictObject({ type: z.string(), data: z.string() })) })
  .meta({ id: "AppendEventsRequest" });

export const ReadEventsRequest = z
  .strictObject({ after_id: int(), limit: int() })
  .meta({ id: "ReadEventsRequest" });

export const ReadEventsResponse = z
  .strictObject({
    events: z.array(z.strictObject({ id: z.int(), at_ms: z.int(), type: z.string(), data: z.string() })),
    last_id: z.int(),
  })
  .meta({ id: "ReadEventsResponse" });

// Job metrics and debounced sends.

export const AddMetricsRequest = z
  .strictObject({
    increments: list(
      z.strictObject({ queue: z.string(), kind: z.enum(["completed", "failed"]), count: z.int() }),
    ),
  })
  .meta({ id: "AddMetricsRequest" });

export const ReadMetricsRequest = z
  .strictObject({
    kind: z.enum(["completed", "failed"]),
    queues: list(z.string()).meta({ description: "Absent: every queue." }),
    from_ms: int(),
    to_ms: int(),
  })
  .meta({ id: "ReadMetricsRequest" });

export const ReadMetricsResponse = z
  .strictObject({ points: z.array(z.strictObject({ minute_ms: z.int(), count: z.int() })) })
  .meta({ id: "ReadMetricsResponse" });

export const SendDebouncedRequest = z
  .strictObject({
    queue: str(),
    message: WireMessage,
    key: z.string(),
    window_ms: z.int(),
    max_wait_ms: z.int(),
    replace_body: bool(),
  })
  .meta({ id: "SendDebouncedRequest" });

export const SendDebouncedResponse = z
  .strictObject({ seq_number: z.int(), created: z.boolean() })
  .meta({ id: "SendDebouncedResponse" });

export function dependencyToWire(d: Dependency): z.input<typeof DependencyJSON> {
  return {
    seq_number: d.seqNumber,
    fail_parent_on_failure: d.failParentOnFailure,
    ...(d.outcome && { outcome: d.outcome }),
    ...(d.error !== undefined && { error: d.error }),
  };
}

export function dependencyFromWire(w: z.output<typeof DependencyJSON>): Dependency {
  const d: Dependency = { seqNumber: w.seq_number, failParentOnFailure: w.fail_parent_on_failure };
  if (w.outcome) d.outcome = w.outcome;
  if (w.error !== undefined && w.error !== null) d.error = w.error;
  return d;
}

export function messageLogToWire(p: MessageLogPage): z.input<typeof MessageLogResponse> {
  return { entries: p.entries.map((e) => ({ index: e.index, at_ms: e.at, text: e.text })), total: p.total };
}

export function messageLogFromWire(w: z.output<typeof MessageLogResponse>): MessageLogPage {
  return { entries: w.entries.map((e) => ({ index: e.index, at: e.at_ms, text: e.text })), total: w.total };
}

export function eventToWire(e: StoredEvent): { id: number; at_ms: number; type: string; data: string } {
  return { id: e.id, at_ms: e.at, type: e.type, data: e.data };
}
