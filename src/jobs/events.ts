import type { QueueEventMap } from "./types.js";

type Listener<E extends keyof QueueEventMap> = (payload: QueueEventMap[E]) => void;

/** An event's payload without its job id: what the events of a burst share. */
export type BurstShared<E extends keyof QueueEventMap> = Omit<QueueEventMap[E], "jobId">;

/** Takes the events of a burst at once: one per job id, each `{ jobId, ...shared }`. */
export type BurstListener<E extends keyof QueueEventMap> = (
  jobIds: readonly string[],
  shared: BurstShared<E>,
) => void;

/** Calls a listener; a throwing listener never breaks the emitter (its error is dropped). */
function call<A extends unknown[]>(listener: (...args: A) => void, ...args: A): void {
  try {
    listener(...args);
  } catch {
    // listeners are observers: their failures are theirs
  }
}

/** Typed, synchronous events; a throwing listener never breaks the worker (its error is dropped). */
export class QueueEventBus {
  /**
   * Each event's listeners, in the order they were added. A list is replaced, never changed, when
   * a listener is added or removed: an emit goes through the list as it was when it began (a
   * listener that removes itself or adds another does not disturb it), without copying it.
   */
  private readonly listeners = new Map<keyof QueueEventMap, readonly Listener<never>[]>();
  /** Listeners that take a burst as one call (see `emitBurst`), replaced as `listeners` are. */
  private readonly burstListeners = new Map<keyof QueueEventMap, readonly BurstListener<never>[]>();

  on<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    add(this.listeners, event, listener as Listener<never>);
  }

  off<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    remove(this.listeners, event, listener as Listener<never>);
  }

  /**
   * Listens to the events of `event` as bursts: an `emitBurst` is one call with its job ids, and a
   * single `emit` a burst of one (the payload's job id and the rest). For a listener that stores
   * events, where a batch of 1,000 enqueues is better one call than 1,000.
   */
  onBurst<E extends keyof QueueEventMap & BurstEvent>(event: E, listener: BurstListener<E>): void {
    add(this.burstListeners, event, listener as BurstListener<never>);
  }

  /** True when someone listens (lets hot paths skip building payloads). */
  has(event: keyof QueueEventMap): boolean {
    return this.listeners.has(event) || this.burstListeners.has(event);
  }

  emit<E extends keyof QueueEventMap>(event: E, payload: QueueEventMap[E]): void {
    const list = this.listeners.get(event);
    if (list) {
      for (const l of list) {
        try {
          (l as Listener<E>)(payload);
        } catch {
          // listeners are observers: their failures are theirs
        }
      }
    }
    const bursts = this.burstListeners.get(event);
    if (bursts) {
      const { jobId, ...shared } = payload as QueueEventMap[E] & { jobId: string };
      for (const l of bursts) call(l as BurstListener<E>, [jobId], shared as never);
    }
  }

  /**
   * Emits one `event` per job id, each `{ jobId, ...shared }` to `on` listeners (in job order), and
   * the whole burst in one call to `onBurst` listeners. `shared` must not change afterwards: a burst
   * listener may keep it.
   */
  emitBurst<E extends keyof QueueEventMap & BurstEvent>(
    event: E,
    jobIds: readonly string[],
    shared: BurstShared<E>,
  ): void {
    if (jobIds.length === 0) return;
    const list = this.listeners.get(event);
    if (list) {
      for (const jobId of jobIds) {
        const payload = { jobId, ...shared } as QueueEventMap[E];
        for (const l of list) call(l as Listener<E>, payload);
      }
    }
    const bursts = this.burstListeners.get(event);
    if (bursts) for (const l of bursts) call(l as BurstListener<E>, jobIds, shared);
  }
}

/** The events whose payload carries a job id (those that come in bursts). */
type BurstEvent = {
  [E in keyof QueueEventMap]: QueueEventMap[E] extends { jobId: string } ? E : never;
}[keyof QueueEventMap];

function add<L>(
  lists: Map<keyof QueueEventMap, readonly L[]>,
  event: keyof QueueEventMap,
  listener: L,
): void {
  const list = lists.get(event) ?? [];
  if (!list.includes(listener)) lists.set(event, [...list, listener]);
}

function remove<L>(
  lists: Map<keyof QueueEventMap, readonly L[]>,
  event: keyof QueueEventMap,
  listener: L,
): void {
  const list = lists.get(event);
  if (!list?.includes(listener)) return;
  const rest = list.filter((l) => l !== listener);
  if (rest.length > 0) lists.set(event, rest);
  else lists.delete(event);
}
