import { z } from "zod";
import type { AttemptError, MessageRecord, WorkerInfo, WorkerRecord } from "../contract/job-service.js";
import { MAX_NAME_LIST, MAX_SEQ_NUMBERS_PER_CALL } from "../contract/limits.js";
import type { MessageState } from "../contract/types.js";
import { decodeBase64, encodeBase64 } from "./base64.js";
import { messageFromWire, messageToWire, WireMessage } from "./message.js";
import { bool, int, list, maxBytes, str } from "./primitives.js";
import { stringMap } from "./string-map.js";

// `mqlite.v1.JobService` (our extension): the engine capabilities the job face runs on, so that
// workers can run against a served broker. Same conventions as the original's services.

export const ClaimGateJSON = z
  .strictObject({
    subject: str(),
    max_locked: int(),
    rate: z.strictObject({ limit: int(), interval_ms: int() }).nullish(),
  })
  .meta({ id: "ClaimGate" });

export const ReceiveAnyRequest = z
  .strictObject({
    queues: list(z.string(), MAX_NAME_LIST),
    max_messages: int(),
    wait_time_ms: int(),
    gates: list(ClaimGateJSON, MAX_NAME_LIST),
    lock_duration_ms: int().meta({
      description: "Lease each claimed message for at most this long (1000 ms to ten years).",
    }),
    max_bytes: maxBytes(),
  })
  .meta({ id: "ReceiveAnyRequest" });

export const CancelMessageRequest = z
  .strictObject({ queue: str(), seq_number: int(), lock_token: str(), retain_ms: int() })
  .meta({ id: "CancelMessageRequest" });

export const CancelMessageResponse = z
  .strictObject({ outcome: z.enum(["cancelled", "requested", "none"]) })
  .meta({ id: "CancelMessageResponse" });

export const SetProgressRequest = z
  .strictObject({ queue: str(), seq_number: int(), lock_token: str(), progress: int() })
  .meta({ id: "SetProgressRequest" });

export const GetMessagesRequest = z
  .strictObject({ seq_numbers: list(z.int()) })
  .meta({ id: "GetMessagesRequest" });

export const BrowseRequest = z
  .strictObject({
    queues: list(z.string(), MAX_NAME_LIST),
    states: list(z.string(), MAX_NAME_LIST),
    backing_off: bool(),
    subject: str(),
    settled_before_ms: int(),
    limit: int(),
    offset: int(),
    order: str().meta({ description: '"newest" (default) or "settled".' }),
  })
  .meta({ id: "BrowseRequest" });

/** A Message with everything the store knows of it. */
export const WireMessageRecord = WireMessage.extend({
  delivered_at_ms: int(),
  settled_at_ms: int(),
  result: z.string().nullish(),
  progress: int(),
  cancel_requested: bool(),
  redrive_count: int(),
  last_error: str(),
}).meta({ id: "MessageRecord" });
export type WireMessageRecord = z.input<typeof WireMessageRecord>;

export const MessageRecordsResponse = z
  .strictObject({ messages: z.array(WireMessageRecord) })
  .meta({ id: "MessageRecordsResponse" });

export const MessageErrorsRequest = z
  .strictObject({ seq_number: int() })
  .meta({ id: "MessageErrorsRequest" });

export const MessageErrorsResponse = z
  .strictObject({
    errors: z.array(
      z.strictObject({ seq_number: z.int(), attempt: z.int(), error: z.string(), failed_at_ms: z.int() }),
    ),
  })
  .meta({ id: "MessageErrorsResponse" });

export const AwaitSettledRequest = z
  .strictObject({ seq_numbers: list(z.int()), wait_time_ms: int() })
  .meta({ id: "AwaitSettledRequest" });

export const AwaitSettledResponse = z
  .strictObject({ seq_numbers: z.array(z.int()) })
  .meta({ id: "AwaitSettledResponse" });

export const DeleteSettledRequest = z
  .strictObject({
    queue: str(),
    states: list(z.string(), MAX_NAME_LIST),
    older_than_ms: int(),
    seq_numbers: list(z.int(), MAX_SEQ_NUMBERS_PER_CALL),
    subject: str(),
    keep_newest: int().meta({ description: "Keep the newest so many of the matching messages." }),
  })
  .meta({ id: "DeleteSettledRequest" });

/** PromoteMessages and RemoveMessages: sequence numbers of one queue. */
export const SeqNumbersOfQueueRequest = z
  .strictObject({ queue: str(), seq_numbers: list(z.int(), MAX_SEQ_NUMBERS_PER_CALL) })
  .meta({ id: "SeqNumbersOfQueueRequest" });

export const PromoteMessagesResponse = z
  .strictObject({ promoted: z.int() })
  .meta({ id: "PromoteMessagesResponse" });

export const RemoveMessagesResponse = z
  .strictObject({ removed: z.int() })
  .meta({ id: "RemoveMessagesResponse" });

export const DeleteSettledResponse = z
  .strictObject({ deleted: z.int() })
  .meta({ id: "DeleteSettledResponse" });

export const WorkerInfoJSON = z
  .strictObject({
    worker_id: str(),
    queues: list(z.string(), MAX_NAME_LIST),
    status: str().meta({ description: '"active" or "draining".' }),
    hostname: str(),
    pid: int(),
    concurrency: int(),
    details: stringMap().nullish(),
  })
  .meta({ id: "WorkerInfo" });

export const WorkerRecordJSON = WorkerInfoJSON.extend({
  started_at_ms: int(),
  last_heartbeat_ms: int(),
}).meta({
  id: "WorkerRecord",
});

export const HeartbeatRequest = z
  .strictObject({ worker: WorkerInfoJSON.nullish(), stale_after_ms: int() })
  .meta({ id: "HeartbeatRequest" });

export const HeartbeatResponse = z
  .strictObject({ registered: z.boolean(), reaped: z.array(WorkerRecordJSON) })
  .meta({ id: "HeartbeatResponse" });

export const ListWorkersResponse = z
  .strictObject({ workers: z.array(WorkerRecordJSON) })
  .meta({ id: "ListWorkersResponse" });

export const RemoveWorkerRequest = z.strictObject({ worker_id: str() }).meta({ id: "RemoveWorkerRequest" });
export const RemoveWorkerResponse = z
  .strictObject({ removed: z.boolean() })
  .meta({ id: "RemoveWorkerResponse" });

export const AcquireLockRequest = z
  .strictObject({ name: str(), owner: str(), ttl_ms: int() })
  .meta({ id: "AcquireLockRequest" });
export const AcquireLockResponse = z
  .strictObject({ acquired: z.boolean() })
  .meta({ id: "AcquireLockResponse" });

export const ReleaseLockRequest = z
  .strictObject({ name: str(), owner: str() })
  .meta({ id: "ReleaseLockRequest" });
export const ReleaseLockResponse = z
  .strictObject({ released: z.boolean() })
  .meta({ id: "ReleaseLockResponse" });

// --- mapping ----------------------------------------------------------------------------------

/** A record on the wire. Unlike Message fields, a present progress or result is kept even when zero. */
export function recordToWire(r: MessageRecord): WireMessageRecord {
  const out: WireMessageRecord = messageToWire(r);
  out.queue = r.queue;
  out.state = r.state;
  if (r.deliveredAt) out.delivered_at_ms = r.deliveredAt;
  if (r.settledAt) out.settled_at_ms = r.settledAt;
  if (r.result !== undefined) out.result = encodeBase64(r.result);
  if (r.progress !== undefined) out.progress = r.progress;
  if (r.uniqueKey !== undefined) out.unique_key = r.uniqueKey;
  if (r.cancelRequested) out.cancel_requested = true;
  if (r.redriveCount) out.redrive_count = r.redriveCount;
  if (r.lastError !== undefined) out.last_error = r.lastError;
  return out;
}

export function recordFromWire(w: WireMessageRecord): MessageRecord {
  const r = messageFromWire(w) as MessageRecord;
  r.queue = w.queue ?? "";
  r.state = (w.state ?? "active") as MessageState;
  if (w.delivered_at_ms) r.deliveredAt = w.delivered_at_ms;
  if (w.settled_at_ms) r.settledAt = w.settled_at_ms;
  if (typeof w.result === "string") r.result = decodeBase64(w.result);
  if (typeof w.progress === "number") r.progress = w.progress;
  if (typeof w.unique_key === "string") r.uniqueKey = w.unique_key;
  if (w.cancel_requested) r.cancelRequested = true;
  if (w.redrive_count) r.redriveCount = w.redrive_count;
  if (typeof w.last_error === "string") r.lastError = w.last_error;
  return r;
}

export function attemptErrorToWire(e: AttemptError) {
  return { seq_number: e.seqNumber, attempt: e.attempt, error: e.error, failed_at_ms: e.failedAt };
}

export function attemptErrorFromWire(
  e: z.output<typeof MessageErrorsResponse>["errors"][number],
): AttemptError {
  return { seqNumber: e.seq_number, attempt: e.attempt, error: e.error, failedAt: e.failed_at_ms };
}

type WireWorkerInfo = z.input<typeof WorkerInfoJSON>;
type WireWorkerRecord = z.input<typeof WorkerRecordJSON>;

export function workerInfoToWire(w: WorkerInfo): WireWorkerInfo {
  return {
    worker_id: w.workerId,
    queues: w.queues,
    status: w.status,
    ...(w.hostname !== undefined && { hostname: w.hostname }),
    ...(w.pid !== undefined && { pid: w.pid }),
    ...(w.concurrency !== undefined && { concurrency: w.concurrency }),
    ...(w.details !== undefined && { details: w.details }),
  };
}

export function workerInfoFromWire(w: WireWorkerInfo): WorkerInfo {
  return {
    workerId: w.worker_id ?? "",
    queues: w.queues ?? [],
    status: (w.status || "active") as WorkerInfo["status"],
    ...(typeof w.hostname === "string" && { hostname: w.hostname }),
    ...(typeof w.pid === "number" && { pid: w.pid }),
    ...(typeof w.concurrency === "number" && { concurrency: w.concurrency }),
    ...(w.details && { details: w.details }),
  };
}

export function workerRecordToWire(w: WorkerRecord): WireWorkerRecord {
  return { ...workerInfoToWire(w), started_at_ms: w.startedAt, last_heartbeat_ms: w.lastHeartbeat };
}

export function workerRecordFromWire(w: WireWorkerRecord): WorkerRecord {
  return {
    ...workerInfoFromWire(w),
    startedAt: w.started_at_ms ?? 0,
    lastHeartbeat: w.last_heartbeat_ms ?? 0,
  };
}
