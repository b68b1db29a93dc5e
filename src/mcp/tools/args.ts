import { z } from "zod";
import { stringMap } from "../../wire/string-map.js";

// Argument schemas shared by the tools. Names are the wire's (snake_case).

export const queue = z.string().min(1).describe("Queue name (a subscription's name for its copies).");
export const seqNumber = z.number().int().positive().describe("The message's seq_number, as received.");
export const lockToken = z
  .string()
  .min(1)
  .describe("The lock_token that came with the message from receive or receive_deferred.");

export const bodyEncoding = z
  .enum(["utf8", "base64"])
  .optional()
  .describe('How `body` is written: "utf8" text (default) or "base64" for binary.');

/** The metadata a message may carry when sent. */
export const messageFields = {
  message_id: z
    .string()
    .optional()
    .describe("Application id; the dedup key when the queue has a dedup window."),
  group_id: z
    .string()
    .optional()
    .describe(
      "Ordering group: same-group messages are delivered one at a time, in order. Required on group_fifo queues.",
    ),
  correlation_id: z.string().optional().describe("Correlation id, e.g. the request this answers."),
  reply_to: z.string().optional().describe("Where replies should be sent."),
  subject: z.string().optional().describe("Dotted label filters can match, e.g. orders.eu.created."),
  content_type: z.string().optional().describe("Content type, e.g. application/json."),
  properties: stringMap().optional().describe("String-valued application properties."),
};

/** The message states peek can select. */
export const messageState = z.enum([
  "active",
  "locked",
  "deferred",
  "scheduled",
  "dead_lettered",
  "completed",
  "cancelled",
]);
