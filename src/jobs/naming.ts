import { QueueError } from "./errors.js";

/** Separates a namespace from a queue name in the engine's queue name (`acme::default`). */
export const NAMESPACE_SEPARATOR = "::";

/** The engine queue that holds a job queue of a namespace. */
export function engineQueue(namespace: string | undefined, queue: string): string {
  if (queue.length === 0) throw new QueueError("a queue name is required");
  if (queue.includes(NAMESPACE_SEPARATOR)) {
    throw new QueueError(`queue names may not contain "${NAMESPACE_SEPARATOR}"`);
  }
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${queue}` : queue;
}

/** Splits an engine queue name back into namespace and job queue. */
export function splitEngineQueue(name: string): { namespace?: string; queue: string } {
  const at = name.lastIndexOf(NAMESPACE_SEPARATOR);
  if (at < 0) return { queue: name };
  return { namespace: name.slice(0, at), queue: name.slice(at + NAMESPACE_SEPARATOR.length) };
}

/** True when an engine queue belongs to the namespace (no namespace: the queues without one). */
export function inNamespace(name: string, namespace: string | undefined): boolean {
  return splitEngineQueue(name).namespace === (namespace || undefined);
}
