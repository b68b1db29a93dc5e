import { CancelledError, ClosedError, MessageTooLargeError } from "../../contract/errors.js";
import type { OutgoingMessage } from "../../contract/types.js";
import {
  decodeBase64,
  hasLargeBody,
  type ListPreparation,
  messageJsonBytes,
  messageToWire,
  outgoingFromWire,
  type RequestOf,
  type ResponseOf,
  statsToWire,
} from "../../wire/index.js";
import { type Answer, WireList } from "../wire-list.js";
import type { Handlers, PreparedSend, RpcContext } from "./context.js";
import { giveBackIfUndelivered } from "./give-back.js";

type QueueRoutes =
  | "send"
  | "receive"
  | "complete"
  | "completeBatch"
  | "renewBatch"
  | "abandon"
  | "reject"
  | "defer"
  | "receiveDeferred"
  | "renew"
  | "schedule"
  | "cancel"
  | "peek"
  | "stats";

const OK = { ok: true } as const;

/** The server's own per-message cap, checked before the broker sees the request (413). */
function checkBodies(messages: OutgoingMessage[], max: number | undefined): void {
  if (max === undefined) return;
  for (const m of messages) {
    const size = (m.body as Buffer).length;
    if (size > max)
      throw new MessageTooLargeError(`mqlite: message body of ${size} bytes is over the ${max}-byte limit`);
  }
}

/** A Send's messages, turned into the broker's as they are decoded (see `ListPreparation`). */
const sendMessages: ListPreparation = { field: "messages", item: outgoingFromWire };

/** The lists this module's handlers take prepared. */
export const queuePreparations = { send: sendMessages, schedule: sendMessages };

/** Send and Schedule share one handler, as in the original. */
async function send(req: PreparedSend, ctx: RpcContext): Promise<ResponseOf<"send">> {
  const queue = req.queue ?? "";
  const messages = req.messages ?? [];
  ctx.note({ queue, n: messages.length });
  // The original answers an empty Send before looking at the queue.
  if (messages.length === 0) return { seq_numbers: null };
  const scheduledAt = req.scheduled_enqueue_time_ms ?? 0;
  if (messages.length === 1 && messages[0]!.messageId) ctx.note({ msg_id: messages[0]!.messageId });
  // A negative schedule time is the broker's 400, which comes before the size check.
  if (scheduledAt >= 0) checkBodies(messages, ctx.maxMessageBytes);
  const ttl = req.ttl_ms ?? 0;
  const seqs = await ctx.broker.send(queue, messages, {
    scheduledAt,
    ...(ttl > 0 && { ttlMs: ttl }),
  });
  if (seqs.length === 1) ctx.note({ seq: seqs[0] });
  return { seq_numbers: seqs };
}

async function receive(req: RequestOf<"receive">, ctx: RpcContext): Promise<Answer<ResponseOf<"receive">>> {
  const queue = req.queue ?? "";
  ctx.note({ queue });
  let messages: Awaited<ReturnType<typeof ctx.broker.receive>>;
  try {
    messages = await ctx.broker.receive(queue, {
      maxMessages: req.max_messages ?? 0,
      waitMs: req.wait_time_ms ?? 0,
      mode: req.receive_mode === 1 ? "receive-and-delete" : "peek-lock",
      ...(req.receive_attempt_id && { attemptId: req.receive_attempt_id }),
      signal: ctx.signal,
      maxBytes: req.max_bytes ?? undefined,
    });
  } catch (err) {
    // A graceful stop wakes long-polls with an empty answer rather than an error.
    if (ctx.stopping.aborted && (err instanceof CancelledError || err instanceof ClosedError)) messages = [];
    else throw err;
  }
  ctx.note({ msgs: messages.length, ...(messages.length === 0 && { quiet: true }) });
  giveBackIfUndelivered(ctx, messages, () => queue);
  return {
    // A copy: the give-back above keeps the messages themselves.
    messages: new WireList(messages.slice(), messageToWire, messageJsonBytes, hasLargeBody),
  };
}

/** What Complete keeps of the message (our extension): a retention and an outcome. */
function keep(req: { retain_ms?: number | null; result?: string | null }) {
  return {
    ...(req.retain_ms !== undefined && req.retain_ms !== null && { retainMs: req.retain_ms }),
    ...(typeof req.result === "string" && { result: decodeBase64(req.result) }),
  };
}

/** The fields every settlement reads. */
function target(
  req: { queue?: string | null; seq_number?: number | null; lock_token?: string | null },
  ctx: RpcContext,
) {
  const queue = req.queue ?? "";
  const seq = req.seq_number ?? 0;
  ctx.note({ queue, seq });
  return [queue, seq, req.lock_token ?? ""] as const;
}

export const queueHandlers: Pick<Handlers, QueueRoutes> = {
  send,
  schedule: send,
  receive,

  async complete(req, ctx) {
    const [queue, seq, token] = target(req, ctx);
    await ctx.broker.complete(queue, seq, token, keep(req));
    ctx.metrics.noteCompleted(queue, 1);
    return OK;
  },

  async completeBatch(req, ctx) {
    const queue = req.queue ?? "";
    const items = (req.messages ?? []).map((m) => ({
      seqNumber: m.seq_number ?? 0,
      lockToken: m.lock_token ?? "",
      ...keep(m),
    }));
    ctx.note({ queue, n: items.length });
    const results = await ctx.broker.completeBatch(queue, items);
    ctx.metrics.noteCompleted(queue, results.filter((r) => r.ok).length);
    return { results: results.map((r) => ({ seq_number: r.seqNumber, ok: r.ok })) };
  },

  async renewBatch(req, ctx) {
    const queue = req.queue ?? "";
    const items = (req.messages ?? []).map((m) => ({
      seqNumber: m.seq_number ?? 0,
      lockToken: m.lock_token ?? "",
    }));
    ctx.note({ queue, n: items.length });
    const results = await ctx.broker.renewBatch(
      queue,
      items,
      req.lock_duration_ms !== undefined && req.lock_duration_ms !== null
        ? { lockDurationMs: req.lock_duration_ms }
        : {},
    );
    return {
      results: results.map((r) => ({
        seq_number: r.seqNumber,
        ok: r.ok,
        ...(r.ok && r.lockedUntil && { locked_until_ms: r.lockedUntil }),
        ...(r.cancelRequested && { cancel_requested: true }),
      })),
    };
  },

  async abandon(req, ctx) {
    const [queue, seq, token] = target(req, ctx);
    const delay = req.delay_ms ?? 0;
    // The original only parks on a positive delay; anything else releases at once.
    await ctx.broker.abandon(queue, seq, token, {
      ...(delay > 0 && { delayMs: delay }),
      ...(req.error && { error: req.error }),
      ...(req.count_delivery === false && { countDelivery: false }),
    });
    return OK;
  },

  async reject(req, ctx) {
    const [queue, seq, token] = target(req, ctx);
    await ctx.broker.reject(queue, seq, token, {
      reason: req.dead_letter_reason ?? "",
      description: req.dead_letter_description ?? "",
      ...(req.error && { error: req.error }),
    });
    return OK;
  },

  async defer(req, ctx) {
    const [queue, seq, token] = target(req, ctx);
    await ctx.broker.defer(queue, seq, token);
    return OK;
  },

  async renew(req, ctx) {
    const [queue, seq, token] = target(req, ctx);
    await ctx.broker.renew(queue, seq, token);
    return OK;
  },

  async receiveDeferred(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const messages = await ctx.broker.receiveDeferred(queue, req.seq_numbers ?? [], {
      maxBytes: req.max_bytes ?? undefined,
    });
    ctx.note({ msgs: messages.length });
    return { messages: new WireList(messages, messageToWire, messageJsonBytes, hasLargeBody) };
  },

  async cancel(req, ctx) {
    const queue = req.queue ?? "";
    const seq = req.seq_number ?? 0;
    ctx.note({ queue, seq });
    await ctx.broker.cancel(queue, seq);
    return OK;
  },

  async peek(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const messages = await ctx.broker.peek(queue, {
      fromSeq: req.from_seq ?? 0,
      max: req.max ?? 0,
      ...(req.state && { state: req.state as never }),
      maxBytes: req.max_bytes ?? undefined,
    });
    ctx.note({ msgs: messages.length });
    return { messages: new WireList(messages, messageToWire, messageJsonBytes, hasLargeBody) };
  },

  async stats(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    return statsToWire(await ctx.broker.stats(queue));
  },
};
