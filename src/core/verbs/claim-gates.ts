import type { ClaimGate } from "../../contract/job-service.js";
import { GATE_RECHECK_MS } from "../gates.js";
import { ask, type Verb } from "../port.js";

interface Bucket {
  key: string;
  limit: number;
  intervalMs: number;
  tokens: number;
  touched: boolean;
}

interface SubjectState {
  lockedLeft: number;
  bucket: Bucket | undefined;
}

/** Per-claim gate bookkeeping, as a claim statement sees it: which subjects to hold back, and what was taken. */
export interface ClaimGateSession {
  /** The subjects held back now (undefined when none is). */
  excluded(): string[] | undefined;
  /** Called for every message claimed. */
  claimed(subject: string | null): void;
}

/** One claim's view of its gates: what is held back, and when a held-back subject may be claimable again. */
export interface GateSession extends ClaimGateSession {
  /** The earliest instant a held-back subject may be claimable again (undefined when none is held back). */
  retryAt(): number | undefined;
  /** Stores the token buckets the claim spent from (inside the claim's transaction). */
  finish(): Verb<void>;
}

/**
 * Claim gates: per-subject caps on locked messages (counted across every queue and consumer) and
 * token buckets (stored, so every consumer of the store shares them). A held-back message is simply
 * not claimed: it keeps its place and its delivery count. Opened inside the claim's transaction,
 * after the dialect serialised the gates' subjects.
 */
export function* openGates(gates: readonly ClaimGate[], now: number): Verb<GateSession> {
  const states = new Map<string, SubjectState>();
  for (const g of gates) {
    const lockedLeft =
      g.maxLocked === undefined
        ? Number.POSITIVE_INFINITY
        : g.maxLocked - (yield* ask((o) => o.claim.lockedCount(g.subject)));
    let bucket: Bucket | undefined;
    if (g.rate) {
      const row = yield* ask((o) => o.claim.bucket(g.subject));
      const { limit, intervalMs } = g.rate;
      const tokens = row
        ? Math.min(limit, row.tokens + (Math.max(0, now - row.updatedAt) * limit) / intervalMs)
        : limit;
      // A refill is stored with the next claim's write; untouched buckets keep their old time.
      bucket = { key: g.subject, limit, intervalMs, tokens, touched: false };
    }
    states.set(g.subject, { lockedLeft, bucket });
  }
  const held = (s: SubjectState) => s.lockedLeft <= 0 || (s.bucket !== undefined && s.bucket.tokens < 1);
  // The held-back list changes only when a claim fills a subject: computed again then.
  let cached: string[] | undefined | null = null;
  return {
    excluded: () => {
      if (cached === null) {
        const out = [...states].filter(([, s]) => held(s)).map(([subject]) => subject);
        cached = out.length === 0 ? undefined : out;
      }
      return cached;
    },
    claimed: (subject) => {
      const s = subject === null ? undefined : states.get(subject);
      if (!s) return;
      s.lockedLeft--;
      if (s.bucket) {
        s.bucket.tokens -= 1;
        s.bucket.touched = true;
      }
      if (held(s)) cached = null;
    },
    retryAt: () => {
      let at: number | undefined;
      for (const s of states.values()) {
        if (!held(s)) continue;
        let t = now + GATE_RECHECK_MS;
        if (s.lockedLeft > 0 && s.bucket)
          t = now + Math.ceil(((1 - s.bucket.tokens) * s.bucket.intervalMs) / s.bucket.limit);
        at = at === undefined ? t : Math.min(at, t);
      }
      return at;
    },
    *finish() {
      for (const s of states.values()) {
        const b = s.bucket;
        if (b?.touched) yield* ask((o) => o.claim.saveBucket({ key: b.key, tokens: b.tokens, now }));
      }
    },
  };
}
