import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { CancelledError, MessageTooLargeError } from "../../contract/errors.js";
import { type JsonText, SLICED_DECODE_BYTES } from "../../wire/index.js";
import type { ServerEnv } from "../env.js";
import { type LargeBodyBudget, LargeBodyTooSlowError } from "../large-bodies.js";
import { MAX_REQUEST_BYTES } from "../options.js";
import { COLLECT_EVERY_BYTES, collectArrivedChunks } from "./arrival-garbage.js";

/**
 * A body over the 32 MiB cap found while it streamed in (no Content-Length to refuse it by): 413,
 * and the connection closes, as the rest of the body is left unread.
 */
export class RequestTooLargeError extends MessageTooLargeError {
  constructor() {
    super(`request body over ${MAX_REQUEST_BYTES} bytes`);
  }
}

/** A request body, and the function that gives its room in the large-body budget back. */
export interface RequestBody {
  text: JsonText;
  /** Call once the request is answered (does nothing for a small body). */
  release: () => void;
}

const NOTHING = () => {};

/** The node request behind `c`, when its body is still unread. */
function unreadIncoming(c: Context<ServerEnv>): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && !incoming.readableDidRead ? incoming : undefined;
}

/** True when `readBody` reads a streamed body itself (and enforces the cap on it). */
export function readsStreamedBody(c: Context<ServerEnv>): boolean {
  return unreadIncoming(c) !== undefined;
}

/**
 * A request body: as text, or, for a large one, as its bytes. A large body (a Content-Length from
 * `SLICED_DECODE_BYTES` on) first takes its room in the server's large-body budget, waiting its
 * turn, then is copied into one buffer of that length as it arrives. It is never made one string:
 * the sliced decoder scans the bytes and decodes each list item on its own. Read the usual way
 * (gather, concatenate, decode), a 32 MiB body held every other request for 100 ms and more and
 * cost three copies of itself at once. A streamed body (no Content-Length) is read here too,
 * capped, and takes room for a maximal body once it passes `SLICED_DECODE_BYTES`. Other bodies take
 * hono's own path.
 */
export async function readBody(
  c: Context<ServerEnv>,
  contentLength: number | undefined,
  budget: LargeBodyBudget,
): Promise<RequestBody> {
  const incoming = unreadIncoming(c);
  if (incoming && contentLength === undefined) return readStreamed(incoming, budget, c.req.raw.signal);
  if (!incoming || contentLength === undefined || contentLength < SLICED_DECODE_BYTES)
    return { text: await c.req.text(), release: NOTHING };
  const release = await budget.take(contentLength, c.req.raw.signal);
  // A client gone while it waited has no body left to read (no event would end the read).
  if (incoming.destroyed) {
    release();
    throw new CancelledError();
  }
  try {
    return { text: await readDeclared(incoming, contentLength, budget.arrivalMs(contentLength)), release };
  } catch (err) {
    release();
    throw err;
  }
}

/** Listens to `incoming` until `done` is called (which removes every listener). */
function listen(
  incoming: IncomingMessage,
  on: { data: (chunk: Buffer) => void; end: () => void; fail: (err: Error) => void; stop?: () => void },
): () => void {
  const onError = (err: Error) => {
    done();
    on.fail(err);
  };
  const onClose = () => {
    if (incoming.readableEnded) return;
    done();
    on.fail(new Error("client connection closed before the body was read"));
  };
  const onEnd = () => {
    done();
    on.end();
  };
  const done = () => {
    on.stop?.();
    incoming.off("data", on.data);
    incoming.off("end", onEnd);
    incoming.off("error", onError);
    incoming.off("close", onClose);
  };
  incoming.on("data", on.data);
  incoming.on("end", onEnd);
  incoming.on("error", onError);
  incoming.on("close", onClose);
  return done;
}

/** The refusal of a body that did not arrive within `ms` of taking its room. */
const tooSlow = (ms: number) =>
  new LargeBodyTooSlowError(`mqlite: a large request body must arrive within ${ms} ms of being let in`);

/** A body of `contentLength` bytes, copied into one buffer as it arrives within `deadlineMs`. */
function readDeclared(incoming: IncomingMessage, contentLength: number, deadlineMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    // Pages are touched only as bytes land in them: memory grows with what has arrived.
    const bytes = Buffer.allocUnsafe(contentLength);
    let filled = 0;
    // The chunks copied so far are garbage: collected every few MiB (see `collectArrivedChunks`).
    let collectAt = COLLECT_EVERY_BYTES;
    const timer = setTimeout(() => {
      done();
      reject(tooSlow(deadlineMs));
    }, deadlineMs);
    const done = listen(incoming, {
      data: (chunk) => {
        // The HTTP parser delivers exactly Content-Length bytes; the check keeps a bug from overflowing.
        if (filled + chunk.length > contentLength) {
          done();
          reject(new Error("request body longer than its Content-Length"));
          return;
        }
        filled += chunk.copy(bytes, filled);
        if (filled >= collectAt) {
          collectArrivedChunks();
          collectAt = filled + COLLECT_EVERY_BYTES;
        }
      },
      end: () => resolve(filled === contentLength ? bytes : bytes.subarray(0, filled)),
      fail: reject,
      stop: () => clearTimeout(timer),
    });
  });
}

/**
 * A streamed body, up to the cap. Past `SLICED_DECODE_BYTES` it stops reading until it holds room
 * for a maximal body in the budget (its final size is unknown), so streaming cannot go round it.
 * Once let in, what came so far and the rest are copied into one buffer of the cap (its pages
 * touched only as bytes land in them), as a declared body is: kept as chunks and joined at the
 * end, a 32 MiB body held two copies of itself at once, and its 64 KiB chunks waited for a
 * collection that nothing else triggered.
 */
function readStreamed(
  incoming: IncomingMessage,
  budget: LargeBodyBudget,
  signal: AbortSignal,
): Promise<RequestBody> {
  return new Promise<RequestBody>((resolve, reject) => {
    /** The chunks until the body is let in (`SLICED_DECODE_BYTES` and a chunk at most). */
    let chunks: Buffer[] = [];
    /** Once it is let in: the body's one buffer. */
    let bytes: Buffer | undefined;
    let total = 0;
    let collectAt = 0;
    let release: (() => void) | undefined;
    let asked = false;
    let failed = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: unknown) => {
      failed = true;
      release?.();
      reject(err);
    };
    const done = listen(incoming, {
      data: (chunk) => {
        total += chunk.length;
        if (total > MAX_REQUEST_BYTES) {
          done();
          fail(new RequestTooLargeError());
          return;
        }
        if (bytes) {
          chunk.copy(bytes, total - chunk.length);
          if (total >= collectAt) {
            collectArrivedChunks();
            collectAt = total + COLLECT_EVERY_BYTES;
          }
          return;
        }
        chunks.push(chunk);
        if (total < SLICED_DECODE_BYTES || asked) return;
        asked = true;
        incoming.pause();
        budget.take(MAX_REQUEST_BYTES, signal).then(
          (give) => {
            // Room given after the read failed (the client went away meanwhile) goes straight back.
            if (failed) return give();
            release = give;
            bytes = Buffer.allocUnsafe(MAX_REQUEST_BYTES);
            let at = 0;
            for (const c of chunks) at += c.copy(bytes, at);
            chunks = [];
            collectAt = total + COLLECT_EVERY_BYTES;
            // Its size unknown, it may take what a maximal body may.
            const ms = budget.arrivalMs(MAX_REQUEST_BYTES);
            timer = setTimeout(() => {
              done();
              fail(tooSlow(ms));
            }, ms);
            incoming.resume();
          },
          (err) => {
            done();
            fail(err);
          },
        );
      },
      end: () => {
        if (bytes) return resolve({ text: bytes.subarray(0, total), release: release ?? NOTHING });
        const joined = Buffer.concat(chunks, total);
        resolve({
          text: total < SLICED_DECODE_BYTES ? joined.toString("utf8") : joined,
          release: release ?? NOTHING,
        });
      },
      fail,
      stop: () => clearTimeout(timer),
    });
  });
}
