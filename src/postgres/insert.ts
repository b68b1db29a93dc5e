import { createHash } from "node:crypto";
import { AlreadyExistsError, GroupRequiredError, NotFoundError } from "../contract/errors.js";
import { filterMessage } from "../engine/filters.js";
import type { Logger } from "../engine/logger.js";
import type { PreparedMessage } from "../engine/outgoing.js";
import type { Target } from "../engine/subscriptions.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import type { PgQueueRegistry, PgQueueRow } from "./queue-registry.js";
import type { PgSubscriptions } from "./subscriptions.js";

/** The outcome of sending one batch: a seq per message (0 for none), and what to wake. */
export interface SendOutcome {
  seqs: number[];
  activated: Set<string>;
  scheduledFor: number[];
}

export interface SendTiming {
  now: number;
  /** The delivery time: `now` for an immediate send. */
  visibleAt: number;
  /** Per-message TTL of the request (0 = none). */
  ttlMs: number;
}

const COLUMNS =
  "queue, state, priority, visible_at, enqueued_at, expires_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms, unique_key";

const INSERT_ONE = `
  INSERT INTO messages (${COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
  RETURNING id`;

/** Many messages to one queue in one statement; ids follow the array order. */
const INSERT_MANY = `
  INSERT INTO messages (${COLUMNS})
  SELECT $1, u.state, u.priority, u.visible_at, $2, u.expires_at, u.message_id, u.correlation_id, u.reply_to,
         u.group_id, u.content_type, u.subject, u.properties, u.body, u.max_deliveries, u.lock_duration_ms, NULL
  FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
              $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[])
       WITH ORDINALITY AS u(state, priority, visible_at, expires_at, message_id, correlation_id, reply_to, group_id,
                            content_type, subject, properties, body, max_deliveries, lock_duration_ms, ord)
  ORDER BY u.ord
  RETURNING id`;

/**
 * The whole send to a plain queue as one statement, guarded by the cached queue row's config version
 * (`$17`): when it is no longer current nothing is inserted and `fresh` is 0.
 */
const SEND_GUARDED = `
  WITH g AS (SELECT 1 FROM queues WHERE name = $1 AND version = $17),
  ins AS (
    INSERT INTO messages (${COLUMNS})
    SELECT $1, u.state, u.priority, u.visible_at, $2, u.expires_at, u.message_id, u.correlation_id, u.reply_to,
           u.group_id, u.content_type, u.subject, u.properties, u.body, u.max_deliveries, u.lock_duration_ms, NULL
    FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
                $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[])
         WITH ORDINALITY AS u(state, priority, visible_at, expires_at, message_id, correlation_id, reply_to, group_id,
                              content_type, subject, properties, body, max_deliveries, lock_duration_ms, ord)
    WHERE EXISTS (SELECT 1 FROM g)
    ORDER BY u.ord
    RETURNING id)
  SELECT (SELECT count(*) FROM g)::int AS fresh, ARRAY(SELECT id FROM ins ORDER BY id) AS ids`;

const FIND_DEDUP =
  "SELECT request_hash, seq_number FROM dedup WHERE queue = $1 AND key = $2 AND seen_at > $3";

const FIND_LIVE = `
  SELECT id FROM messages
  WHERE queue = $1 AND unique_key = $2 AND state IN ('active', 'locked', 'deferred', 'scheduled')`;

/** One message into a dedup queue, and its dedup row, in one statement. */
const INSERT_DEDUPED = `
  WITH ins AS (${INSERT_ONE})
  INSERT INTO dedup (queue, key, request_hash, seq_number, seen_at)
  SELECT $1, $18, $19, ins.id, $5 FROM ins
  ON CONFLICT (queue, key) DO UPDATE SET request_hash = excluded.request_hash,
    seq_number = excluded.seq_number, seen_at = excluded.seen_at
  RETURNING seq_number AS id`;

function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The dedup key: the message id, or the body's hash; a very long id is stored as its hash (index rows are bounded). */
function dedupKey(m: PreparedMessage, bodyHash: string): string {
  const key = m.messageId ?? bodyHash;
  return key.length > 512 ? `sha256:${sha256(key)}` : key;
}

type Outcome = { kind: "inserted" | "duplicate"; seq: number } | { kind: "conflict" };

/**
 * The publish path inside one transaction: resolve the name (topic first, then queue), route each
 * message through the subscriptions' filters, check the group rule, take the ordering and dedup
 * locks (sorted), insert, and notify the target queues on commit.
 */
export class PgInserter {
  constructor(
    private readonly schema: string,
    private readonly queues: PgQueueRegistry,
    private readonly subscriptions: PgSubscriptions,
    private readonly logger: Logger,
  ) {}

  async send(c: Conn, name: string, messages: PreparedMessage[], t: SendTiming): Promise<SendOutcome> {
    const targets = await this.subscriptions.targets(c, name);
    // Per message, the queues that take a copy (in subscription-name order).
    let routes: string[][];
    let rows: Map<string, PgQueueRow>;
    let names: string[];
    if (targets) {
      routes = messages.map((m) => targets.filter((x) => this.accepts(x, m, t)).map((x) => x.name));
      names = targets.map((x) => x.name).filter((n) => routes.some((r) => r.includes(n)));
      rows = names.length > 0 ? await this.queues.getMany(c, names) : new Map();
      for (const n of names) if (!rows.has(n)) throw new NotFoundError("mqlite: queue not found");
    } else {
      const q = await this.queues.get(c, name);
      if (!q) throw new NotFoundError("mqlite: queue not found");
      rows = new Map([[name, q]]);
      routes = messages.map(() => [name]);
      names = [name];
    }

    const keys: bigint[] = [];
    const hashes = new Map<PreparedMessage, string>();
    messages.forEach((m, i) => {
      for (const qName of routes[i]!) {
        const q = rows.get(qName)!;
        if (q.ordering_mode === "group_fifo" && m.groupId === null) throw new GroupRequiredError();
        if (q.ordering_mode === "strict_fifo") keys.push(xactLockKey(this.schema, "queue", qName));
        else if (m.groupId !== null) keys.push(xactLockKey(this.schema, "group", qName, m.groupId));
        if (m.uniqueKey !== null) keys.push(xactLockKey(this.schema, "unique", qName, m.uniqueKey));
        if (q.dedup_window_ms > 0) {
          let h = hashes.get(m);
          if (!h) {
            h = sha256(m.body);
            hashes.set(m, h);
          }
          keys.push(xactLockKey(this.schema, "dedup", qName, dedupKey(m, h)));
        }
      }
    });
    await lockAll(c, keys);

    const out: SendOutcome = { seqs: [], activated: new Set(), scheduledFor: [] };
    const outcomes = new Map<string, Outcome[]>();
    for (const qName of names) {
      const q = rows.get(qName)!;
      const results: Outcome[] = new Array(messages.length);
      outcomes.set(qName, results);
      let ttl = t.ttlMs;
      if (q.default_ttl_ms > 0 && (ttl <= 0 || ttl > q.default_ttl_ms)) ttl = q.default_ttl_ms;
      const row = (m: PreparedMessage): Row => {
        const visibleAt = m.delayMs > 0 ? Math.max(t.visibleAt, t.now + m.delayMs) : t.visibleAt;
        return {
          m,
          visibleAt,
          state: visibleAt > t.now ? "scheduled" : "active",
          expiresAt: ttl > 0 ? visibleAt + ttl : 0,
          // strict_fifo delivers in sequence order only: priority would break it, so it is not stored.
          priority: q.ordering_mode === "strict_fifo" ? 0 : m.priority,
        };
      };
      const inserted = (i: number, r: Row, seq: number) => {
        results[i] = { kind: "inserted", seq };
        if (r.state === "active") out.activated.add(qName);
        else out.scheduledFor.push(r.visibleAt);
      };
      let run: { i: number; r: Row }[] = [];
      const flush = async () => {
        if (run.length === 0) return;
        const batch = run;
        run = [];
        if (batch.length === 1) {
          const { i, r } = batch[0]!;
          const [ins] = await c.q<{ id: number }>(INSERT_ONE, oneRow(qName, r, t.now));
          inserted(i, r, ins!.id);
          return;
        }
        const rs = batch.map((b) => b.r);
        const ids = (
          await c.q<{ id: number }>(INSERT_MANY, [
            qName,
            t.now,
            rs.map((r) => r.state),
            rs.map((r) => r.priority),
            rs.map((r) => r.visibleAt),
            rs.map((r) => r.expiresAt),
            rs.map((r) => r.m.messageId),
            rs.map((r) => r.m.correlationId),
            rs.map((r) => r.m.replyTo),
            rs.map((r) => r.m.groupId),
            rs.map((r) => r.m.contentType),
            rs.map((r) => r.m.subject),
            rs.map((r) => r.m.propertiesJson),
            rs.map((r) => r.m.body),
            rs.map((r) => r.m.maxDeliveries),
            rs.map((r) => r.m.lockDurationMs),
          ])
        )
          .map((x) => x.id)
          .sort((a, b) => a - b);
        batch.forEach((b, k) => {
          inserted(b.i, b.r, ids[k]!);
        });
      };
      for (let i = 0; i < messages.length; i++) {
        if (!routes[i]!.includes(qName)) continue;
        const m = messages[i]!;
        const r = row(m);
        if (m.uniqueKey === null && q.dedup_window_ms <= 0) {
          run.push({ i, r });
          continue;
        }
        await flush();
        if (m.uniqueKey !== null) {
          // A live message holds its key: the send answers with it (like a dedup hit).
          const [live] = await c.q<{ id: number }>(FIND_LIVE, [qName, m.uniqueKey]);
          if (live) {
            results[i] = { kind: "duplicate", seq: live.id };
            continue;
          }
        }
        if (q.dedup_window_ms <= 0) {
          const [ins] = await c.q<{ id: number }>(INSERT_ONE, oneRow(qName, r, t.now));
          inserted(i, r, ins!.id);
          continue;
        }
        const hash = hashes.get(m)!;
        const key = dedupKey(m, hash);
        const [seen] = await c.q<{ request_hash: string; seq_number: number }>(FIND_DEDUP, [
          qName,
          key,
          t.now - q.dedup_window_ms,
        ]);
        if (seen) {
          results[i] =
            seen.request_hash === hash ? { kind: "duplicate", seq: seen.seq_number } : { kind: "conflict" };
          continue;
        }
        const [ins] = await c.q<{ id: number }>(INSERT_DEDUPED, [...oneRow(qName, r, t.now), key, hash]);
        inserted(i, r, ins!.id);
      }
      await flush();
    }

    const single = messages.length === 1;
    messages.forEach((_m, i) => {
      let slot = 0;
      let conflict = false;
      for (const qName of routes[i]!) {
        const r = outcomes.get(qName)![i]!;
        if (r.kind === "conflict") {
          conflict = true;
          continue;
        }
        slot = r.seq;
      }
      if (single && conflict && slot === 0) {
        throw new AlreadyExistsError(
          "mqlite: a message with this id and a different body was sent within the dedup window",
        );
      }
      out.seqs.push(slot);
    });
    return out;
  }

  /**
   * Whether a send can be the one guarded statement: a cached row of a standard queue without a
   * dedup window, and no message that needs a lock (group, unique key).
   */
  static fastPathFor(q: PgQueueRow | undefined, messages: PreparedMessage[]): q is PgQueueRow {
    return (
      q !== undefined &&
      q.dedup_window_ms <= 0 &&
      q.ordering_mode === "standard" &&
      messages.every((m) => m.groupId === null && m.uniqueKey === null)
    );
  }

  /** The one-statement send (see `fastPathFor`); `fresh: false` means the cached row is stale and nothing was stored. */
  async sendGuarded(
    c: Conn,
    q: PgQueueRow,
    messages: PreparedMessage[],
    t: SendTiming,
  ): Promise<{ fresh: boolean; out: SendOutcome }> {
    let ttl = t.ttlMs;
    if (q.default_ttl_ms > 0 && (ttl <= 0 || ttl > q.default_ttl_ms)) ttl = q.default_ttl_ms;
    const rs = messages.map((m) => {
      const visibleAt = m.delayMs > 0 ? Math.max(t.visibleAt, t.now + m.delayMs) : t.visibleAt;
      return {
        m,
        visibleAt,
        state: visibleAt > t.now ? "scheduled" : "active",
        expiresAt: ttl > 0 ? visibleAt + ttl : 0,
      };
    });
    const [row] = await c.q<{ fresh: number; ids: number[] }>(SEND_GUARDED, [
      q.name,
      t.now,
      rs.map((r) => r.state),
      rs.map((r) => r.m.priority),
      rs.map((r) => r.visibleAt),
      rs.map((r) => r.expiresAt),
      rs.map((r) => r.m.messageId),
      rs.map((r) => r.m.correlationId),
      rs.map((r) => r.m.replyTo),
      rs.map((r) => r.m.groupId),
      rs.map((r) => r.m.contentType),
      rs.map((r) => r.m.subject),
      rs.map((r) => r.m.propertiesJson),
      rs.map((r) => r.m.body),
      rs.map((r) => r.m.maxDeliveries),
      rs.map((r) => r.m.lockDurationMs),
      q.version,
    ]);
    const out: SendOutcome = { seqs: [], activated: new Set(), scheduledFor: [] };
    if (!row || row.fresh === 0) return { fresh: false, out };
    out.seqs = row.ids.map(Number);
    for (const r of rs) {
      if (r.state === "active") out.activated.add(q.name);
      else out.scheduledFor.push(r.visibleAt);
    }
    return { fresh: true, out };
  }

  /** Whether a subscription takes a copy: not paused, and its filter says yes (fail-closed). */
  private accepts(x: Target, m: PreparedMessage, t: SendTiming): boolean {
    if (x.paused || x.kind !== "queue") return false;
    if (!x.filter) return true;
    return x.filter.matches(filterMessage(m, t.now, t.visibleAt), (err) =>
      this.logger.warn(
        { topic: x.topic, subscription: x.name, err: err.message },
        "filter failed at run time; message not routed to this subscription",
      ),
    );
  }
}

interface Row {
  m: PreparedMessage;
  visibleAt: number;
  state: "active" | "scheduled";
  expiresAt: number;
  priority: number;
}

function oneRow(queue: string, r: Row, now: number): unknown[] {
  const m = r.m;
  return [
    queue,
    r.state,
    r.priority,
    r.visibleAt,
    now,
    r.expiresAt,
    m.messageId,
    m.correlationId,
    m.replyTo,
    m.groupId,
    m.contentType,
    m.subject,
    m.propertiesJson,
    m.body,
    m.maxDeliveries,
    m.lockDurationMs,
    m.uniqueKey,
  ];
}

/**
 * The notifications that wake long-polls on every node (and arm the leader's scheduler) for what a
 * transaction did: `q:<queue>` for a queue that gained claimable messages, `s:<epoch ms>` for the
 * earliest new scheduled delivery. They are sent after the commit (see `PostgresBroker.publish`).
 */
export function payloadsOf(what: { activated: Iterable<string>; scheduledFor: number[] }): string[] {
  const payloads = [...what.activated].map((q) => `q:${q}`);
  if (what.scheduledFor.length > 0) payloads.push(`s:${Math.min(...what.scheduledFor)}`);
  return payloads;
}
