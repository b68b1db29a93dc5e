import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { SLICED_DECODE_BYTES } from "../../wire/index.js";
import type { ServerEnv } from "../env.js";

/**
 * A request body: as text, or, for a large one (a Content-Length from `SLICED_DECODE_BYTES` on),
 * as its bytes, copied into one buffer of that length as they arrive. A large body is never made
 * one string: the sliced decoder scans the bytes and decodes each list item on its own. Read the
 * usual way (gather, concatenate, decode), a 32 MiB body held every other request for 100 ms and
 * more and cost three copies of itself at once. Other bodies take hono's own path.
 */
export function readBody(c: Context<ServerEnv>, contentLength: number | undefined): Promise<string | Buffer> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (
    contentLength === undefined ||
    contentLength < SLICED_DECODE_BYTES ||
    !incoming ||
    incoming.readableDidRead
  )
    return c.req.text();
  return new Promise<Buffer>((resolve, reject) => {
    // Pages are touched only as bytes land in them: memory grows with what has arrived.
    const bytes = Buffer.allocUnsafe(contentLength);
    let filled = 0;
    const onData = (chunk: Buffer) => {
      // The HTTP parser delivers exactly Content-Length bytes; the check keeps a bug from overflowing.
      if (filled + chunk.length > contentLength) {
        cleanup();
        reject(new Error("request body longer than its Content-Length"));
        return;
      }
      filled += chunk.copy(bytes, filled);
    };
    const onEnd = () => {
      cleanup();
      resolve(filled === contentLength ? bytes : bytes.subarray(0, filled));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      if (incoming.readableEnded) return;
      cleanup();
      reject(new Error("client connection closed before the body was read"));
    };
    const cleanup = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}
