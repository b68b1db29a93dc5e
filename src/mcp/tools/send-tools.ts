import { z } from "zod";
import { InvalidArgumentError } from "../../contract/errors.js";
import type { OutgoingMessage } from "../../contract/types.js";
import { bodyFromAgent } from "../body.js";
import { tool, WRITES } from "../tool.js";
import { bodyEncoding, messageFields, queue, seqNumber } from "./args.js";

const sendArgs = {
  queue: z.string().min(1).describe("Queue or topic name. A topic fans out to its matching subscriptions."),
  body: z.string().describe("The message body: text (UTF-8), or base64 with body_encoding base64."),
  body_encoding: bodyEncoding,
  ...messageFields,
  ttl_ms: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      "Time to live in ms; the queue's default TTL is a ceiling. Expired messages are dead-lettered.",
    ),
};

type SendArgs = z.output<z.ZodObject<typeof sendArgs>>;

function outgoing(a: SendArgs): OutgoingMessage {
  const m: OutgoingMessage = { body: bodyFromAgent(a.body, a.body_encoding) };
  if (a.message_id) m.messageId = a.message_id;
  if (a.group_id) m.groupId = a.group_id;
  if (a.correlation_id) m.correlationId = a.correlation_id;
  if (a.reply_to) m.replyTo = a.reply_to;
  if (a.subject) m.subject = a.subject;
  if (a.content_type) m.contentType = a.content_type;
  if (a.properties && Object.keys(a.properties).length > 0) m.properties = a.properties;
  return m;
}

/** The delivery time a schedule asks for: `at` (RFC 3339) or `delay_ms` from now, exactly one. */
function deliveryTime(at: string | undefined, delayMs: number | undefined): number {
  if ((at === undefined) === (delayMs === undefined))
    throw new InvalidArgumentError("mqlite: give exactly one of at (RFC 3339 time) and delay_ms");
  if (delayMs !== undefined) return Date.now() + delayMs;
  const t = Date.parse(at!);
  if (Number.isNaN(t)) throw new InvalidArgumentError(`mqlite: at "${at}" is not an RFC 3339 time`);
  return t;
}

export const sendTools = [
  tool({
    name: "send",
    title: "Send a message",
    description:
      "Send one message to a queue, or publish it to a topic (a copy goes to each subscription whose filter " +
      "matches). Returns {seq_numbers:[n]}: the message's sequence number, or 0 when no subscription accepted " +
      "it. Errors: not_found (no such queue or topic), group_required (group_fifo queue without group_id), " +
      "already_exists (same message_id with another body inside the dedup window), message_too_large.",
    input: sendArgs,
    annotations: WRITES,
    run: async (broker, a) => {
      const options = a.ttl_ms ? { ttlMs: a.ttl_ms } : {};
      return { seq_numbers: await broker.send(a.queue, outgoing(a), options) };
    },
  }),
  tool({
    name: "schedule",
    title: "Schedule a message",
    description:
      "Send a message that stays hidden until a later time, then is delivered like any other. Give `at` " +
      "(RFC 3339, e.g. 2030-01-02T09:00:00Z) or `delay_ms` (from now). Returns {seq_numbers:[n], " +
      "scheduled_enqueue_time_ms}. Keep the seq_number to cancel it before it is delivered.",
    input: {
      ...sendArgs,
      at: z
        .string()
        .optional()
        .describe("Delivery time, RFC 3339 (e.g. 2030-01-02T09:00:00Z). Must be in the future."),
      delay_ms: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("Deliver this many ms from now (instead of at)."),
    },
    annotations: WRITES,
    run: async (broker, a) => {
      const when = deliveryTime(a.at, a.delay_ms);
      const seqs = await broker.schedule(a.queue, outgoing(a), when, a.ttl_ms ? { ttlMs: a.ttl_ms } : {});
      return { seq_numbers: seqs, scheduled_enqueue_time_ms: when };
    },
  }),
  tool({
    name: "cancel",
    title: "Cancel a scheduled message",
    description:
      "Delete a scheduled message that was never delivered. Returns {ok:true}; not_found when it is not " +
      "(or no longer) a never-delivered scheduled message of that queue.",
    input: { queue, seq_number: seqNumber },
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.cancel(a.queue, a.seq_number);
      return { ok: true };
    },
  }),
];
