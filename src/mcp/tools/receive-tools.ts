import { z } from "zod";
import { messagesForAgent } from "../messages.js";
import { READ_ONLY, tool, WRITES } from "../tool.js";
import { lockToken, messageState, queue, seqNumber } from "./args.js";

const lockRef = { queue, seq_number: seqNumber, lock_token: lockToken };
const OK = { ok: true } as const;
const LOCK_LOST =
  "lock_lost when the token is wrong or the lock lapsed (the message was or will be delivered again).";

export const receiveTools = [
  tool({
    name: "receive",
    title: "Receive messages",
    description:
      "Take up to max_messages messages from a queue under a peek-lock. Each comes back with seq_number and " +
      "lock_token and stays hidden from other consumers for the queue's lock duration (30 s by default). " +
      "Settle every message you take: complete (done), abandon (retry later), reject (dead-letter) or defer " +
      "(set aside); renew extends a lock during long work. An unsettled message is delivered again when its " +
      "lock lapses. Bodies are text, or base64 with body_encoding: base64. Returns {messages:[...]}, empty " +
      "when nothing arrived within wait_time_ms.",
    input: {
      queue,
      max_messages: z
        .number()
        .int()
        .min(1)
        .max(256)
        .optional()
        .describe("At most this many (default 1, up to 256)."),
      wait_time_ms: z
        .number()
        .int()
        .min(0)
        .max(20_000)
        .optional()
        .describe("Long-poll up to this many ms when nothing is ready (default 0, up to 20000)."),
    },
    annotations: WRITES,
    run: async (broker, a, signal) =>
      messagesForAgent(
        await broker.receive(a.queue, {
          maxMessages: a.max_messages ?? 1,
          waitMs: a.wait_time_ms ?? 0,
          signal,
        }),
      ),
  }),
  tool({
    name: "receive_deferred",
    title: "Receive deferred messages",
    description:
      "Take deferred messages by seq_number (a deferred message is never returned by receive). They come back " +
      "locked with a lock_token, to settle like any received message. Numbers that are not deferred in this " +
      "queue are skipped. Returns {messages:[...]}.",
    input: {
      queue,
      seq_numbers: z.array(seqNumber).min(1).describe("Sequence numbers of deferred messages."),
    },
    annotations: WRITES,
    run: async (broker, a) => messagesForAgent(await broker.receiveDeferred(a.queue, a.seq_numbers)),
  }),
  tool({
    name: "complete",
    title: "Complete a message",
    description: `Settle a received message as done: it is deleted. Returns {ok:true}; ${LOCK_LOST}`,
    input: lockRef,
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.complete(a.queue, a.seq_number, a.lock_token);
      return OK;
    },
  }),
  tool({
    name: "abandon",
    title: "Abandon a message",
    description:
      "Give a received message back for another delivery, at once or after delay_ms. At the queue's delivery " +
      `limit it is dead-lettered instead (reason MaxDeliveryCountExceeded). Returns {ok:true}; ${LOCK_LOST}`,
    input: {
      ...lockRef,
      delay_ms: z.number().int().min(0).optional().describe("Keep it hidden this many ms before redelivery."),
    },
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.abandon(a.queue, a.seq_number, a.lock_token, a.delay_ms ? { delayMs: a.delay_ms } : {});
      return OK;
    },
  }),
  tool({
    name: "renew",
    title: "Renew a lock",
    description:
      "Extend a received message's lock by the queue's lock duration, for work that takes longer. Returns " +
      `{ok:true}; ${LOCK_LOST}`,
    input: lockRef,
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.renew(a.queue, a.seq_number, a.lock_token);
      return OK;
    },
  }),
  tool({
    name: "defer",
    title: "Defer a message",
    description:
      "Set a received message aside: receive no longer returns it, only receive_deferred with its seq_number " +
      `(note the number). On ordered queues it holds its group until settled. Returns {ok:true}; ${LOCK_LOST}`,
    input: lockRef,
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.defer(a.queue, a.seq_number, a.lock_token);
      return OK;
    },
  }),
  tool({
    name: "reject",
    title: "Dead-letter a message",
    description:
      "Move a received message to the queue's dead-letter queue (it is not delivered again until redriven). " +
      `Returns {ok:true}; ${LOCK_LOST}`,
    input: {
      ...lockRef,
      reason: z.string().optional().describe("Dead-letter reason (default AppRequested)."),
      description: z.string().optional().describe("Dead-letter description: what went wrong."),
    },
    annotations: WRITES,
    run: async (broker, a) => {
      await broker.reject(a.queue, a.seq_number, a.lock_token, {
        ...(a.reason && { reason: a.reason }),
        ...(a.description && { description: a.description }),
      });
      return OK;
    },
  }),
  tool({
    name: "peek",
    title: "Peek at messages",
    description:
      "Read a queue's messages without locking or changing them, in seq_number order, with their state " +
      "(and dead_letter_reason for dead letters). Page on with from_seq = last seq_number + 1. Returns " +
      "{messages:[...]}; an unknown queue gives an empty list.",
    input: {
      queue,
      state: messageState.optional().describe("Only messages in this state, e.g. dead_lettered."),
      max: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .describe("At most this many (default 32, up to 1000)."),
      from_seq: z.number().int().min(0).optional().describe("Start at this seq_number (inclusive)."),
    },
    annotations: READ_ONLY,
    run: async (broker, a) =>
      messagesForAgent(
        await broker.peek(a.queue, {
          ...(a.state && { state: a.state }),
          max: a.max ?? 0,
          fromSeq: a.from_seq ?? 0,
        }),
      ),
  }),
];
