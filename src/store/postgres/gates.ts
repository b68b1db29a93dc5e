import type { ClaimGate } from "../../contract/job-service.js";
import { GATE_RECHECK_MS } from "../../core/gates.js";
import type { Conn } from "./db.js";

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

/** One claim's view of its gates (as on SQLite): what is held back, and when it may be claimable again. */
export interface GateSession {
  /** The subjects held back now. */
  excluded(): string[];
  /** Called for every message claimed. */
  claimed(subject: string | null): void;
  /** The earliest instant a held-back subject may be claimable again (undefined when none is). */
  retryAt(): number | undefined;
  /** Stores the token buckets (inside the claim's transaction). */
  finish(): Promise<void>;
}

const COUNT_LOCKED = "SELECT count(*)::int AS n FROM messages WHERE state = 'locked' AND subject = $1";
const READ_BUCKET = "SELECT tokens, updated_at FROM rate_limits WHERE key = $1";
const WRITE_BUCKET = `
  INSERT INTO rate_limits (key, tokens, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at`;

/**
 * Claim gates on PostgreSQL: per-subject caps on locked messages (across every queue and node) and
 * token buckets stored in `rate_limits`. The caller holds each gate subject's transaction lock, so
 * two nodes never both see room for the same last slot or token.
 */
export class PgGates {
  async open(c: Conn, gates: ClaimGate[], now: number): Promise<GateSession> {
    const states = new Map<string, SubjectState>();
    for (const g of gates) {
      const lockedLeft =
        g.maxLocked === undefined
          ? Number.POSITIVE_INFINITY
          : g.maxLocked - ((await c.q<{ n: number }>(COUNT_LOCKED, [g.subject]))[0]?.n ?? 0);
      let bucket: Bucket | undefined;
      if (g.rate) {
        const [row] = await c.q<{ tokens: number; updated_at: number }>(READ_BUCKET, [g.subject]);
        const { limit, intervalMs } = g.rate;
        const tokens = row
          ? Math.min(limit, row.tokens + (Math.max(0, now - row.updated_at) * limit) / intervalMs)
          : limit;
        bucket = { key: g.subject, limit, intervalMs, tokens, touched: false };
      }
      states.set(g.subject, { lockedLeft, bucket });
    }
    const held = (s: SubjectState) => s.lockedLeft <= 0 || (s.bucket !== undefined && s.bucket.tokens < 1);
    return {
      excluded: () => [...states].filter(([, s]) => held(s)).map(([subject]) => subject),
      claimed: (subject) => {
        const s = subject === null ? undefined : states.get(subject);
        if (!s) return;
        s.lockedLeft--;
        if (s.bucket) {
          s.bucket.tokens -= 1;
          s.bucket.touched = true;
        }
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
      finish: async () => {
        for (const s of states.values()) {
          if (s.bucket?.touched) await c.q(WRITE_BUCKET, [s.bucket.key, s.bucket.tokens, now]);
        }
      },
    };
  }
}
