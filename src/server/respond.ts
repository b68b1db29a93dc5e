import type { ServerResponse } from "node:http";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { encodeJson, errorToWire } from "../wire/index.js";
import { answerTurns } from "./answer-turns.js";
import type { AccessFields, ServerEnv } from "./env.js";
import { WireList } from "./wire-list.js";

/** Runs `fn` once the answer is written or its connection closed (at once outside a node server). */
export function whenWritten(c: Context<ServerEnv>, fn: () => void): void {
  const res = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (!res || res.closed) fn();
  else res.once("close", fn);
}

/** Merges fields into the request's access-log record. */
export function note(c: Context<ServerEnv>, fields: AccessFields): void {
  const access = c.get("access");
  if (access) Object.assign(access, fields);
  else c.set("access", { ...fields });
}

const JSON_HEADERS = { "Content-Type": "application/json" } as const;

/**
 * `JSON_HEADERS` with a server's CORS headers, merged once: a server has one CORS header object,
 * and @hono/node-server copies a plain header object before changing it, so answers can share it.
 */
let corsOf: Readonly<Record<string, string>> | undefined;
let jsonWithCors: Readonly<Record<string, string>> = JSON_HEADERS;
function jsonHeadersWith(cors: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (cors !== corsOf) {
    corsOf = cors;
    jsonWithCors = { ...JSON_HEADERS, ...cors };
  }
  return jsonWithCors;
}

/**
 * A JSON answer as Go's encoder writes it: compact, trailing newline, `application/json`; with the
 * request's CORS headers (see `ServerEnv`) and `extra` ones.
 */
export function json(
  c: Context<ServerEnv>,
  status: number,
  body: unknown,
  extra?: Record<string, string>,
): Response {
  const text = encodeJson(body);
  const headers = extra ? { "Content-Type": "application/json", ...extra } : JSON_HEADERS;
  const cors = c.get("cors");
  // Off the RPC path, headers may have been set on the context: hono merges them.
  if (cors === undefined) return c.body(text, status as ContentfulStatusCode, headers);
  // On it nothing was (see `ServerEnv`): these are all of the answer's headers.
  return new Response(text, { status, headers: extra ? { ...headers, ...cors } : jsonHeadersWith(cors) });
}

/** An answer from this many bytes on is written in slices (`json`). */
const SLICED_ANSWER_BYTES = 256 * 1024;

/**
 * A list of an answer that may be large: of more than one item, or a `WireList` of one item it
 * writes as bytes (one message of a 1 MiB body is 1.4 MB of JSON: encoded whole, with its base64
 * and its copies as strings, eight single-message Peeks at once held the server for 100-200 ms).
 * Any other one-item list is answered whole, as a small answer is (it costs a microsecond less).
 */
const isLongList = (v: unknown): v is unknown[] | WireList<unknown> => {
  if (v instanceof WireList)
    return v.length > 1 || (v.length === 1 && v.inBytes?.(v.items[0] as never) === true);
  return Array.isArray(v) && v.length > 1;
};

/** Part of a sliced answer: text (encoded as it is written) or bytes already encoded. */
type Chunk = string | Uint8Array;

/**
 * An answer whose one list is large, as a stream of slices encoded a few milliseconds at a time
 * with other requests served in between (encoding a 32 MiB Peek answer and converting it to bytes
 * in one go held the server for half a second and more); the answers being encoded share each turn
 * of the event loop (`answerTurns`). The request's own turn encodes just enough to tell a large
 * answer from a small one (`SLICED_ANSWER_BYTES`). The bytes are those of `encodeJson`'s
 * text: the fields in their order, the list's items each by `JSON.stringify`. Undefined when the
 * answer has no list or encodes in one short slice of text (then it is answered whole, as usual). A
 * `WireList`'s item is turned into its wire form (or straight into bytes) only then, and dropped
 * from the list once encoded.
 */
function slicedAnswer(body: unknown): ReadableStream<Uint8Array> | string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  // Most answers (a Send's one seq number, a settlement's ok) list nothing: no entries to build.
  if (!Object.values(body).some(isLongList)) return undefined;
  const entries = Object.entries(body).filter(([, v]) => v !== undefined);
  const at = entries.findIndex(([, v]) => isLongList(v));
  if (at === -1) return undefined;
  const field = (k: string, v: unknown) => `${JSON.stringify(k)}:${JSON.stringify(v)}`;
  const head = `{${entries
    .slice(0, at)
    .map(([k, v]) => `${field(k, v)},`)
    .join("")}${JSON.stringify(entries[at]![0])}:[`;
  const tail = `]${entries
    .slice(at + 1)
    .map(([k, v]) => `,${field(k, v)}`)
    .join("")}}\n`;
  const list = entries[at]![1] as unknown[] | WireList<unknown>;
  const own = list instanceof WireList ? list : undefined;
  const items = own ? own.items : (list as unknown[]);
  const toWire = own?.toWire as ((item: unknown) => unknown) | undefined;
  const jsonBytes = own?.jsonBytes as ((item: unknown) => readonly Uint8Array[] | undefined) | undefined;
  let next = 0;
  /** Encodes items from `next` until `until` or `most` bytes (one at least): its chunks, text runs joined. */
  const slice = (until: number, most: number): Chunk[] => {
    const chunks: Chunk[] = [];
    let text = "";
    let bytes = 0;
    while (next < items.length && bytes < most && (bytes === 0 || performance.now() < until)) {
      let item = items[next];
      const comma = next === 0 ? "" : ",";
      next++;
      if (own) {
        // The list is the answer's own: its item goes once written.
        items[next - 1] = undefined;
        const encoded = jsonBytes?.(item);
        if (encoded) {
          chunks.push(text + comma, ...encoded);
          text = "";
          for (const piece of encoded) bytes += piece.length;
          continue;
        }
        item = toWire!(item);
      }
      const itemText = JSON.stringify(item) ?? "null";
      text += comma + itemText;
      bytes += itemText.length;
    }
    chunks.push(text);
    return chunks;
  };
  const first = slice(Number.POSITIVE_INFINITY, SLICED_ANSWER_BYTES);
  if (next === items.length && first.length === 1 && (first[0] as string).length < SLICED_ANSWER_BYTES)
    return head + (first[0] as string) + tail;
  const encoder = new TextEncoder();
  let pending: Chunk[] | undefined = [head, ...first];
  const write = (controller: ReadableStreamDefaultController<Uint8Array>, chunks: Chunk[]) => {
    for (const c of chunks) {
      if (typeof c !== "string") controller.enqueue(c);
      else if (c.length > 0) controller.enqueue(encoder.encode(c));
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== undefined) {
        write(controller, pending);
        pending = undefined;
        return;
      }
      await answerTurns.slice((until) => {
        const chunks = slice(until, SLICED_ANSWER_BYTES * 4);
        if (next === items.length) {
          write(controller, [...chunks, tail]);
          controller.close();
        } else write(controller, chunks);
      });
    },
  });
}

/**
 * `json` for an RPC's answer, which may list many messages: a large list is written in slices
 * (see `slicedAnswer`).
 */
export function answerJson(c: Context<ServerEnv>, body: unknown): Response {
  const sliced = slicedAnswer(body);
  if (sliced === undefined) return json(c, 200, body);
  const cors = c.get("cors");
  const headers = cors === undefined ? JSON_HEADERS : jsonHeadersWith(cors);
  if (typeof sliced === "string") {
    if (cors === undefined) return c.body(sliced, 200, headers);
    return new Response(sliced, { status: 200, headers });
  }
  return new Response(sliced, { status: 200, headers: cors === undefined ? { ...JSON_HEADERS } : headers });
}

/** The `{"code","message"}` answer of any thrown value (unknown errors are 500 `internal`). */
export function errorJson(c: Context<ServerEnv>, err: unknown, extra?: Record<string, string>): Response {
  const { status, body } = errorToWire(err);
  note(c, { code: body.code });
  return json(c, status, body, extra);
}
