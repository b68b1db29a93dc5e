/**
 * The messages between a worker and its sandbox processes (Node's IPC channel with `advanced`
 * serialization, so byte arrays cross as they are). Arguments and results cross as the bytes of
 * the queue's serializer, so the types it carries survive the trip.
 */

/** Which serializer the sandbox decodes and encodes with: the queue's own. */
export type SerializerRef = { kind: "json" } | { kind: "cbor" } | { kind: "module"; href: string };

/** The `currentJob()` calls a sandbox forwards to the worker. */
export const FORWARDED_CALLS = [
  "log",
  "updateProgress",
  "setProgress",
  "childResults",
  "childFailures",
] as const;
export type ForwardedCall = (typeof FORWARDED_CALLS)[number];

/** An error as it crosses the channel. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

/** Worker → sandbox: run one job. */
export interface RunMessage {
  type: "run";
  /** Names the run in its forwarded calls (a late call of a finished job is refused). */
  runId: number;
  href: string;
  exportName: string;
  serializer: SerializerRef;
  /** The call body: `serializeCall(serializer, args)`. */
  body: Uint8Array;
  job: { jobId: string; taskName: string; queue: string; attempt: number };
}

/** Worker → sandbox: the answer to a forwarded call (its value serialized). */
export interface ReplyMessage {
  type: "reply";
  id: number;
  ok: boolean;
  value?: Uint8Array;
  error?: WireError;
}

/** Sandbox → worker: the job's outcome (the result serialized). */
export interface DoneMessage {
  type: "done";
  ok: boolean;
  value?: Uint8Array;
  error?: WireError;
}

/** Sandbox → worker: a `currentJob()` call to run against the job. */
export interface CallMessage {
  type: "call";
  runId: number;
  id: number;
  method: ForwardedCall;
  args: unknown[];
}

/** Sandbox → worker: an uncaught error, sent just before the process exits. */
export interface FatalMessage {
  type: "fatal";
  error: WireError;
}

export type ToSandbox = RunMessage | ReplyMessage;
export type FromSandbox = DoneMessage | CallMessage | FatalMessage;

export function toWireError(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: "Error", message: String(err) };
  const wire: WireError = { name: err.name, message: err.message };
  if (err.stack !== undefined) wire.stack = err.stack;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") wire.code = code;
  return wire;
}

const BUILT_IN: Record<string, ErrorConstructor> = {
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/**
 * The error as the other side threw it: same name, message, stack and `code`. Built-in error
 * types come back as themselves (so `retryOn: (e) => !(e instanceof TypeError)` still works);
 * other classes come back as an `Error` carrying their name.
 */
export function fromWireError(wire: WireError): Error {
  const Ctor = BUILT_IN[wire.name] ?? Error;
  const err = new Ctor(wire.message);
  if (err.name !== wire.name) err.name = wire.name;
  if (wire.stack !== undefined) err.stack = wire.stack;
  if (wire.code !== undefined) (err as { code?: string }).code = wire.code;
  return err;
}
