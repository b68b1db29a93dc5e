import { ask, type Verb, type WriteScope } from "../port.js";

/**
 * The statements of named leases (`acquireLock`/`releaseLock`): one owner at a time until the
 * lease lapses. Used for leader election and once-per-tick work across processes.
 */
export interface NamedLockOps {
  /** Takes the lease until `expiresAt`, or renews it, unless another owner holds it past `now`. */
  acquire(a: { name: string; owner: string; expiresAt: number; now: number }): boolean;
  /** Gives the lease up if `owner` holds it past `now`. True when it did. */
  release(a: { name: string; owner: string; now: number }): boolean;
}

/** Takes or renews the lease; false while another owner holds it unexpired. */
export function* acquireLock(s: WriteScope, name: string, owner: string, ttlMs: number): Verb<boolean> {
  return yield* ask((o) => o.locks.acquire({ name, owner, expiresAt: s.now + ttlMs, now: s.now }));
}

export function* releaseLock(s: WriteScope, name: string, owner: string): Verb<boolean> {
  return yield* ask((o) => o.locks.release({ name, owner, now: s.now }));
}
