import type { QueueEventMap } from "./types.js";

type Listener<E extends keyof QueueEventMap> = (payload: QueueEventMap[E]) => void;

/** Typed, synchronous events; a throwing listener never breaks the worker (its error is dropped). */
export class QueueEventBus {
  /**
   * Each event's listeners, in the order they were added. A list is replaced, never changed, when
   * a listener is added or removed: an emit goes through the list as it was when it began (a
   * listener that removes itself or adds another does not disturb it), without copying it.
   */
  private readonly listeners = new Map<keyof QueueEventMap, readonly Listener<never>[]>();

  on<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    const list = this.listeners.get(event) ?? [];
    if (!list.includes(listener as Listener<never>)) {
      this.listeners.set(event, [...list, listener as Listener<never>]);
    }
  }

  off<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    const list = this.listeners.get(event);
    if (!list?.includes(listener as Listener<never>)) return;
    const rest = list.filter((l) => l !== listener);
    if (rest.length > 0) this.listeners.set(event, rest);
    else this.listeners.delete(event);
  }

  /** True when someone listens (lets hot paths skip building payloads). */
  has(event: keyof QueueEventMap): boolean {
    return this.listeners.has(event);
  }

  emit<E extends keyof QueueEventMap>(event: E, payload: QueueEventMap[E]): void {
    const list = this.listeners.get(event);
    if (!list) return;
    for (const l of list) {
      try {
        (l as Listener<E>)(payload);
      } catch {
        // listeners are observers: their failures are theirs
      }
    }
  }
}
