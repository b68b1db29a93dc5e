import { z } from "zod";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import { WireMessage } from "./message.js";
import { bool, bytes, int, list, maxBytes, str } from "./primitives.js";

// Request and response bodies of `mqlite.v1.QueueService`. Field names and meanings are the
// original's (spec §1.9); `.meta({ id })` names each schema in /openapi.json.

export const SendRequest = z
  .strictObject({
    queue: str(),
    messages: list(WireMessage),
    scheduled_enqueue_time_ms: int().meta({ description: "Epoch ms; 0 = now. Must be in the future." }),
    ttl_ms: int().meta({ description: "Applies to every message; only used when > 0." }),
  })
  .meta({ id: "SendRequest" });

export const SendResponse = z
  .strictObject({
    seq_numbers: z
      .array(z.int())
      .nullable()
      .meta({ description: "One per message (0 = not accepted); null for an empty request." }),
  })
  .meta({ id: "SendResponse" });

export const ReceiveRequest = z
  .strictObject({
    queue: str(),
    max_messages: int().meta({ description: "≤0 → 1, clamped to 256." }),
    wait_time_ms: int().meta({ description: "Long-poll, clamped to 0..20000." }),
    receive_mode: int().meta({ description: "1 = receive-and-delete; anything else = peek-lock." }),
    receive_attempt_id: str(),
    max_bytes: maxBytes(),
  })
  .meta({ id: "ReceiveRequest" });

export const ReceiveResponse = z
  .strictObject({ messages: z.array(WireMessage) })
  .meta({ id: "ReceiveResponse" });

export const SettleRequest = z
  .strictObject({
    queue: str(),
    seq_number: int(),
    lock_token: str(),
    dead_letter_reason: str().meta({ description: "Reject only; default AppRequested." }),
    dead_letter_description: str().meta({ description: "Reject only." }),
    delay_ms: int().meta({ description: "Abandon only: park for this long before redelivery." }),
    error: str().meta({ description: "Extension (Abandon, Reject): recorded in the error history." }),
    count_delivery: bool().meta({ description: "Extension (Abandon): false gives the delivery back." }),
    retain_ms: int().meta({ description: "Extension (Complete): keep the message as completed this long." }),
    result: bytes().meta({ description: "Extension (Complete): the outcome kept with it." }),
  })
  .meta({ id: "SettleRequest" });

export const LockRefJSON = z.strictObject({ seq_number: int(), lock_token: str() }).meta({ id: "LockRef" });

export const CompleteItemJSON = z
  .strictObject({
    seq_number: int(),
    lock_token: str(),
    retain_ms: int().meta({ description: "Extension: keep the message as completed this long." }),
    result: bytes().meta({ description: "Extension: the outcome kept with it." }),
  })
  .meta({ id: "CompleteItem" });

export const CompleteBatchRequest = z
  .strictObject({ queue: str(), messages: list(CompleteItemJSON) })
  .meta({ id: "CompleteBatchRequest" });

export const CompleteBatchResponse = z
  .strictObject({ results: z.array(z.strictObject({ seq_number: z.int(), ok: z.boolean() })) })
  .meta({ id: "CompleteBatchResponse" });

export const RenewBatchRequest = z
  .strictObject({
    queue: str(),
    messages: list(LockRefJSON, MAX_RENEW_BATCH).meta({ description: "At most 512." }),
    lock_duration_ms: int().meta({
      description: "Extension: renew each lease for at most this long (1000 ms to ten years).",
    }),
  })
  .meta({ id: "RenewBatchRequest" });

export const RenewBatchResponse = z
  .strictObject({
    results: z.array(
      z.strictObject({
        seq_number: z.int(),
        ok: z.boolean(),
        locked_until_ms: z.int().optional(),
        cancel_requested: z
          .boolean()
          .optional()
          .meta({ description: "Extension: someone asked to cancel it." }),
      }),
    ),
  })
  .meta({ id: "RenewBatchResponse" });

export const ReceiveDeferredRequest = z
  .strictObject({ queue: str(), seq_numbers: list(z.int()), max_bytes: maxBytes() })
  .meta({ id: "ReceiveDeferredRequest" });

export const CancelRequest = z
  .strictObject({ queue: str(), seq_number: int() })
  .meta({ id: "CancelRequest" });

export const PeekRequest = z
  .strictObject({
    queue: str(),
    from_seq: int(),
    state: str().meta({ description: "active, locked, deferred, scheduled or dead_lettered." }),
    max: int().meta({ description: "≤0 → 32, clamped to 1000." }),
    max_bytes: maxBytes(),
  })
  .meta({ id: "PeekRequest" });

export const PeekResponse = z.strictObject({ messages: z.array(WireMessage) }).meta({ id: "PeekResponse" });

export const MetricsRequest = z.strictObject({ queue: str() }).meta({ id: "MetricsRequest" });

export const MetricsResponse = z
  .strictObject({
    queue: z.string(),
    active: z.int(),
    locked: z.int(),
    deferred: z.int(),
    scheduled: z.int(),
    dead_lettered: z.int(),
    completed: z.int().meta({ description: "Extension: completed messages kept for their retention." }),
    cancelled: z.int().meta({ description: "Extension: cancelled messages kept for their retention." }),
    backing_off: z.int().meta({ description: "Extension: scheduled messages delivered before." }),
    total: z.int(),
    oldest_message_age_ms: z.int(),
  })
  .meta({ id: "MetricsResponse" });
