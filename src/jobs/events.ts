import type { QueueEventMap } from "./types.js";

type Listener<E extends keyof QueueEventMap> = (payload: QueueEventMap[E]) => void;

/** Typed, synchronous events; a throwing listener never breaks the worker (its error is dropped). */
export class QueueEventBus {
  private readonly listeners = new Map<keyof QueueEventMap, Set<Listener<never>>>();

  on<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
  }

  off<E extends keyof QueueEventMap>(event: E, listener: Listener<E>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  /** True when someone listens (lets hot paths skip building payloads). */
  has(event: keyof QueueEventMap): boolean {
    return (this.listeners.get(event)?.size ?? 0) > 0;
  }

  emit<E extends keyof QueueEventMap>(event: E, payload: QueueEventMap[E]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const l of [...set]) {
      try {
        (l as Listener<E>)(payload);
      } catch {
        // listeners are observers: their failures are theirs
      }
    }
  }
}
