/**
 * The entry of a sandbox process: runs the jobs its worker sends, one at a time, each inside a
 * `currentJob()` context whose log, progress and flow calls are forwarded to the worker.
 */
import { type JobContext, runInJob } from "../context.js";
import { deserializeCall, JsonSerializer, type Serializer } from "../serializer.js";
import { SandboxLoadError } from "./errors.js";
import type {
  ForwardedCall,
  FromSandbox,
  ReplyMessage,
  RunMessage,
  SerializerRef,
  ToSandbox,
} from "./protocol.js";
import { fromWireError, toWireError } from "./protocol.js";

type Handler = (...args: unknown[]) => unknown;

const handlers = new Map<string, Handler>();
const serializers = new Map<string, Serializer>();
const pending = new Map<number, (reply: ReplyMessage) => void>();
let nextCallId = 1;

function send(message: FromSandbox): void {
  process.send?.(message);
}

async function serializerFor(ref: SerializerRef): Promise<Serializer> {
  const key = ref.kind === "module" ? ref.href : ref.kind;
  let serializer = serializers.get(key);
  if (serializer) return serializer;
  if (ref.kind === "json") serializer = new JsonSerializer();
  else if (ref.kind === "cbor") serializer = new (await import("../cbor.js")).CborSerializer();
  else {
    const exported = (await import(ref.href)).default as unknown;
    const made = typeof exported === "function" ? new (exported as new () => unknown)() : exported;
    const candidate = made as Partial<Serializer> | undefined;
    if (typeof candidate?.serialize !== "function" || typeof candidate.deserialize !== "function")
      throw new SandboxLoadError(`${ref.href} has no serializer as its default export`);
    serializer = candidate as Serializer;
  }
  serializers.set(key, serializer);
  return serializer;
}

async function handlerFor(href: string, exportName: string): Promise<Handler> {
  const key = `${exportName}\0${href}`;
  const known = handlers.get(key);
  if (known) return known;
  let mod: Record<string, unknown>;
  try {
    mod = await import(href);
  } catch (err) {
    throw new SandboxLoadError(`cannot load ${href}: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }
  const handler = mod[exportName];
  if (typeof handler !== "function")
    throw new SandboxLoadError(`${href} has no function exported as "${exportName}"`);
  handlers.set(key, handler as Handler);
  return handler as Handler;
}

/** Asks the worker to run a `currentJob()` call against the job; resolves with its value. */
function forward(
  runId: number,
  serializer: Serializer,
  method: ForwardedCall,
  args: unknown[],
): Promise<unknown> {
  const id = nextCallId++;
  return new Promise((resolve, reject) => {
    pending.set(id, (reply) => {
      if (!reply.ok) reject(fromWireError(reply.error ?? { name: "Error", message: "failed" }));
      else resolve(reply.value === undefined ? undefined : serializer.deserialize(reply.value));
    });
    send({ type: "call", runId, id, method, args });
  });
}

async function run(m: RunMessage): Promise<void> {
  try {
    const serializer = await serializerFor(m.serializer);
    const handler = await handlerFor(m.href, m.exportName);
    const args = deserializeCall(serializer, m.body);
    const call =
      (method: ForwardedCall) =>
      (...args: unknown[]) =>
        forward(m.runId, serializer, method, args);
    const ctx: JobContext = {
      ...m.job,
      // Timeouts and cancellations kill this process rather than abort the signal.
      signal: new AbortController().signal,
      log: call("log") as JobContext["log"],
      updateProgress: call("updateProgress") as JobContext["updateProgress"],
      setProgress: call("setProgress") as JobContext["setProgress"],
      childResults: call("childResults") as JobContext["childResults"],
      childFailures: call("childFailures") as JobContext["childFailures"],
    };
    const value = await runInJob(ctx, () => handler(...args));
    send({ type: "done", ok: true, value: serializer.serialize(value) });
  } catch (err) {
    send({ type: "done", ok: false, error: toWireError(err) });
  }
}

/** Reports an error nothing caught, then exits: the worker fails the job with it. */
function fatal(err: unknown): void {
  const exit = () => process.exit(70);
  setTimeout(exit, 1000).unref();
  if (process.connected)
    process.send?.({ type: "fatal", error: toWireError(err) } satisfies FromSandbox, exit);
  else exit();
}

process.on("uncaughtException", fatal);
process.on("unhandledRejection", fatal);
// The worker is gone (it exited or crashed): nothing more will come.
process.on("disconnect", () => process.exit(0));
process.on("message", (m: ToSandbox) => {
  if (m.type === "run") void run(m);
  else if (m.type === "reply") {
    const settle = pending.get(m.id);
    pending.delete(m.id);
    settle?.(m);
  }
});
