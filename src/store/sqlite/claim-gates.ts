import type { ClaimGate } from "../../contract/job-service.js";
import { GATE_RECHECK_MS } from "../../core/gates.js";
import type { ClaimGateSession } from "./claim.js";
import type { SqliteDatabase } from "./database.js";

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

/** One claim's view of its gates: what is held back, and when a held-back subject may be claimable again. */
export interface GateSession extends ClaimGateSession {
  /** The earliest instant a held-back subject may be claimable again (undefined when none is held back). */
  retryAt(): number | undefined;
  /** Stores the token buckets (inside the claim's transaction). */
  finish(): void;
}

/**
 * Claim gates: per-subject caps on locked messages (counted across every queue and consumer) and
 * token buckets (stored, so every consumer of the file shares them). A held-back message is simply
 * not claimed: it keeps its place and its delivery count.
 */
export class ClaimGates {
  private readonly countLocked;
  private readonly readBucket;
  private readonly writeBucket;

  constructor(db: SqliteDatabase) {
    this.countLocked = db.prepare(
      "SELECT count(*) AS n FROM messages INDEXED BY idx_msg_lease WHERE state = 'locked' AND subject = ?",
    );
    this.readBucket = db.prepare("SELECT tokens, updated_at FROM rate_limits WHERE key = ?");
    this.writeBucket = db.prepare(`
      INSERT INTO rate_limits (key, tokens, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at`);
  }

  /** Opens a session inside a write transaction. */
  open(gates: ClaimGate[], now: number): GateSession {
    const states = new Map<string, SubjectState>();
    for (const g of gates) {
      const lockedLeft =
        g.maxLocked === undefined
          ? Number.POSITIVE_INFINITY
          : g.maxLocked - (this.countLocked.get(g.subject) as { n: number }).n;
      states.set(g.subject, {
        lockedLeft,
        bucket: g.rate ? this.loadBucket(g.subject, g.rate, now) : undefined,
      });
    }
    let cached: string | undefined | null = null;
    const held = (s: SubjectState) => s.lockedLeft <= 0 || (s.bucket !== undefined && s.bucket.tokens < 1);
    return {
      excluded: () => {
        if (cached === null) {
          const out = [...states].filter(([, s]) => held(s)).map(([subject]) => subject);
          cached = out.length === 0 ? undefined : JSON.stringify(out);
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
      finish: () => {
        for (const s of states.values()) {
          if (s.bucket?.touched) this.writeBucket.run(s.bucket.key, s.bucket.tokens, now);
        }
      },
    };
  }

  private loadBucket(key: string, rate: { limit: number; intervalMs: number }, now: number): Bucket {
    const row = this.readBucket.get(key) as { tokens: number; updated_at: number } | undefined;
    const tokens = row
      ? Math.min(rate.limit, row.tokens + (Math.max(0, now - row.updated_at) * rate.limit) / rate.intervalMs)
      : rate.limit;
    // A refill is stored with the next claim's write; untouched buckets keep their old time.
    return { key, limit: rate.limit, intervalMs: rate.intervalMs, tokens, touched: false };
  }
}
