import type { IncomingMessage } from "node:http";
import { StringDecoder } from "node:string_decoder";
import type { Context } from "hono";
import { SLICED_DECODE_BYTES } from "../../wire/index.js";
import type { ServerEnv } from "../env.js";

/**
 * A request body as text. A large one (a Content-Length from `SLICED_DECODE_BYTES` on) is decoded
 * chunk by chunk as it arrives, so no turn of the event loop copies and decodes it whole: reading a
 * 32 MiB body the usual way (gather, concatenate, decode) held every other request for 100 ms or
 * more. Malformed UTF-8 becomes U+FFFD either way. Other bodies take hono's own path.
 */
export function bodyText(c: Context<ServerEnv>, contentLength: number | undefined): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (
    contentLength === undefined ||
    contentLength < SLICED_DECODE_BYTES ||
    !incoming ||
    incoming.readableDidRead
  )
    return c.req.text();
  return new Promise<string>((resolve, reject) => {
    const decoder = new StringDecoder("utf8");
    const parts: string[] = [];
    const onData = (chunk: Buffer) => parts.push(decoder.write(chunk));
    const onEnd = () => {
      cleanup();
      parts.push(decoder.end());
      resolve(parts.join(""));
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
