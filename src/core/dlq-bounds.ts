/** The broker-wide DLQ retention bounds a queue inherits (0 = no bound). */
export interface DlqBounds {
  maxAgeMs: number;
  maxCount: number;
  maxBytes: number;
}

export const NO_DLQ_BOUNDS: DlqBounds = { maxAgeMs: 0, maxCount: 0, maxBytes: 0 };

/** A queue's effective bound: 0 inherits the broker's, >0 is its own, <0 is unbounded. */
export function effectiveBound(own: number, inherited: number): number {
  if (own > 0) return own;
  if (own < 0) return 0;
  return inherited;
}
