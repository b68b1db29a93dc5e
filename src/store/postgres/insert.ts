import { createHash } from "node:crypto";
import { AlreadyExistsError, GroupRequiredError, NotFoundError } from "../../contract/errors.js";
import type { Logger } from "../../contract/logger.js";
import type { Delivery, PublishResult } from "../../contract/topic-service.js";
import { byCreation, taskDelivery } from "../../core/fanout.js";
import { filterMessage } from "../../core/filters.js";
import type { PreparedMessage } from "../../core/outgoing.js";
import type { Target } from "../../core/subscription-rows.js";
import type { FilterMessage } from "../../filter/index.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import type { PgQueueRegistry, PgQueueRow } from "./queue-registry.js";
import type { PgSubscriptions } from "./subscriptions.js";

/** The outcome of sending one batch: a seq per message (0 for none), and what to wake. */
export interface SendOutcome {
  seqs: number[];
  activated: Set<string>;
  scheduledFor: number[];
  /** Per message: what a publish to a topic made of it. */
  published: PublishResult[];
}

/** One copy of a message to store: into a queue, for a subscription. */
interface Copy {
  i: number;
  queue: string;
  m: PreparedMessage;
  kind: "queue" | "task";
  sub: string;
  origin?: { topic: string; subscription: string };
  outcome?: Outcome;
}

const INSERT_LOG = `
  INSERT INTO topic_messages (topic, created_at, expires_at, message_id, correlation_id, content_type, subject,
    properties, body)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`;

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
  INSERT INTO messages (${COLUMNS}, topic, subscription)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
  RETURNING id`;

/** Many messages to one queue in one statement; ids follow the array order. */
const INSERT_MANY = `
  INSERT INTO messages (${COLUMNS}, topic, subscription)
  SELECT $1, u.state, u.priority, u.visible_at, $2, u.expires_at, u.message_id, u.correlation_id, u.reply_to,
         u.group_id, u.content_type, u.subject, u.properties, u.body, u.max_deliveries, u.lock_duration_ms, NULL,
         u.topic, u.subscription
  FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
              $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[], $17::text[], $18::text[])
       WITH ORDINALITY AS u(state, priority, visible_at, expires_at, message_id, correlation_id, reply_to, group_id,
                            content_type, subject, properties, body, max_deliveries, lock_duration_ms, topic,
                            subscription, ord)
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
  SELECT $1, $20, $21, ins.id, $5 FROM ins
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
    const queueRow = targets ? undefined : await this.queues.get(c, name);
    const declared = queueRow ? undefined : await this.declared(c, name);
    const isTopic = targets !== undefined || declared !== undefined;
    if (!isTopic && !queueRow) throw new NotFoundError("mqlite: queue not found");
    // Every copy to store, in message order then subscription-name order.
    const copies: Copy[] = [];
    const toLog: boolean[] = messages.map(() => false);
    messages.forEach((m, i) => {
      if (!isTopic) {
        copies.push({ i, queue: name, m, kind: "queue", sub: name });
        return;
      }
      // One filter input per message: the subscriptions' filters share its decoded body.
      const input = filterMessage(m, t.now, t.visibleAt);
      for (const x of targets ?? []) {
        if (!this.accepts(x, input)) continue;
        if (x.kind === "queue") copies.push({ i, queue: x.name, m, kind: "queue", sub: x.name });
        else if (x.kind === "task") {
          copies.push({
            i,
            queue: x.queue ?? "",
            m: taskDelivery(m, x),
            kind: "task",
            sub: x.name,
            origin: { topic: name, subscription: x.name },
          });
        } else toLog[i] = true;
      }
    });
    const names = [...new Set(copies.map((k) => k.queue))];
    const rows = queueRow
      ? new Map([[name, queueRow]])
      : names.length > 0
        ? await this.queues.getMany(c, names)
        : new Map<string, PgQueueRow>();
    for (const k of copies) {
      if (rows.has(k.queue)) continue;
      if (k.kind !== "task") throw new NotFoundError("mqlite: queue not found");
      // A task subscription's queue deleted behind it is created again.
      await this.queues.upsert(c, k.queue, undefined, t.now);
      rows.set(k.queue, await this.queues.require(c, k.queue));
    }

    const keys: bigint[] = [];
    const hashes = new Map<PreparedMessage, string>();
    for (const k of copies) {
      const q = rows.get(k.queue)!;
      const m = k.m;
      if (q.ordering_mode === "group_fifo" && m.groupId === null) throw new GroupRequiredError();
      if (q.ordering_mode === "strict_fifo") keys.push(xactLockKey(this.schema, "queue", k.queue));
      else if (m.groupId !== null) keys.push(xactLockKey(this.schema, "group", k.queue, m.groupId));
      if (m.uniqueKey !== null) keys.push(xactLockKey(this.schema, "unique", k.queue, m.uniqueKey));
      if (q.dedup_window_ms > 0) {
        let h = hashes.get(m);
        if (!h) {
          h = sha256(m.body);
          hashes.set(m, h);
        }
        keys.push(xactLockKey(this.schema, "dedup", k.queue, dedupKey(m, h)));
      }
    }
    await lockAll(c, keys);

    const out: SendOutcome = { seqs: [], activated: new Set(), scheduledFor: [], published: [] };
    for (const qName of names) {
      const q = rows.get(qName)!;
      let ttl = t.ttlMs;
      if (q.default_ttl_ms > 0 && (ttl <= 0 || ttl > q.default_ttl_ms)) ttl = q.default_ttl_ms;
      const row = (k: Copy): Row => {
        const m = k.m;
        const visibleAt = m.delayMs > 0 ? Math.max(t.visibleAt, t.now + m.delayMs) : t.visibleAt;
        return {
          m,
          visibleAt,
          state: visibleAt > t.now ? "scheduled" : "active",
          expiresAt: ttl > 0 ? visibleAt + ttl : 0,
          // strict_fifo delivers in sequence order only: priority would break it, so it is not stored.
          priority: q.ordering_mode === "strict_fifo" ? 0 : m.priority,
          topic: k.origin?.topic ?? null,
          subscription: k.origin?.subscription ?? null,
        };
      };
      const inserted = (k: Copy, r: Row, seq: number) => {
        k.outcome = { kind: "inserted", seq };
        if (r.state === "active") out.activated.add(qName);
        else out.scheduledFor.push(r.visibleAt);
      };
      let run: { k: Copy; r: Row }[] = [];
      const flush = async () => {
        if (run.length === 0) return;
        const batch = run;
        run = [];
        if (batch.length === 1) {
          const { k, r } = batch[0]!;
          const [ins] = await c.q<{ id: number }>(INSERT_ONE, oneRow(qName, r, t.now));
          inserted(k, r, ins!.id);
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
            rs.map((r) => r.topic),
            rs.map((r) => r.subscription),
          ])
        )
          .map((x) => x.id)
          .sort((a, b) => a - b);
        batch.forEach((b, n) => {
          inserted(b.k, b.r, ids[n]!);
        });
      };
      for (const k of copies) {
        if (k.queue !== qName) continue;
        const m = k.m;
        const r = row(k);
        if (m.uniqueKey === null && q.dedup_window_ms <= 0) {
          run.push({ k, r });
          continue;
        }
        await flush();
        if (m.uniqueKey !== null) {
          // A live message holds its key: the send answers with it (like a dedup hit).
          const [live] = await c.q<{ id: number }>(FIND_LIVE, [qName, m.uniqueKey]);
          if (live) {
            k.outcome = { kind: "duplicate", seq: live.id };
            continue;
          }
        }
        if (q.dedup_window_ms <= 0) {
          const [ins] = await c.q<{ id: number }>(INSERT_ONE, oneRow(qName, r, t.now));
          inserted(k, r, ins!.id);
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
          k.outcome =
            seen.request_hash === hash ? { kind: "duplicate", seq: seen.seq_number } : { kind: "conflict" };
          continue;
        }
        const [ins] = await c.q<{ id: number }>(INSERT_DEDUPED, [...oneRow(qName, r, t.now), key, hash]);
        inserted(k, r, ins!.id);
      }
      await flush();
    }

    const single = messages.length === 1;
    for (let i = 0; i < messages.length; i++) {
      let slot = 0;
      let conflict = false;
      const result: PublishResult = { deliveries: [] };
      for (const k of copies) {
        if (k.i !== i) continue;
        const r = k.outcome!;
        if (r.kind === "conflict") {
          conflict = true;
          continue;
        }
        slot = r.seq;
        if (isTopic) {
          const d: Delivery = { subscription: k.sub, kind: k.kind, queue: k.queue, seqNumber: r.seq };
          if (r.kind === "duplicate") d.duplicate = true;
          result.deliveries.push(d);
        }
      }
      if (single && conflict && slot === 0) {
        throw new AlreadyExistsError(
          "mqlite: a message with this id and a different body was sent within the dedup window",
        );
      }
      if (toLog[i] || declared) {
        const m = messages[i]!;
        let expiresAt = t.ttlMs > 0 ? t.now + t.ttlMs : 0;
        if (
          expiresAt === 0 &&
          !toLog[i] &&
          declared?.retention_ms !== null &&
          declared?.retention_ms !== undefined
        ) {
          expiresAt = t.now + declared.retention_ms;
        }
        const [row] = await c.q<{ id: number }>(INSERT_LOG, [
          name,
          t.now,
          expiresAt,
          m.messageId,
          m.correlationId,
          m.contentType,
          m.subject,
          m.propertiesJson,
          m.body,
        ]);
        result.logId = row!.id;
      }
      out.seqs.push(slot);
      if (targets) byCreation(result.deliveries, targets);
      out.published.push(result);
    }
    return out;
  }

  /** A declared topic's row (only a topic may be declared; none is a queue). */
  async declared(c: Conn, name: string): Promise<{ retention_ms: number | null } | undefined> {
    const [row] = await c.q<{ retention_ms: number | null }>(
      "SELECT retention_ms FROM topics WHERE name = $1",
      [name],
    );
    return row;
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
    const out: SendOutcome = { seqs: [], activated: new Set(), scheduledFor: [], published: [] };
    if (!row || row.fresh === 0) return { fresh: false, out };
    out.seqs = row.ids.map(Number);
    for (const r of rs) {
      if (r.state === "active") out.activated.add(q.name);
      else out.scheduledFor.push(r.visibleAt);
    }
    return { fresh: true, out };
  }

  /** Whether a subscription takes a copy: not paused, and its filter says yes (fail-closed). */
  private accepts(x: Target, input: FilterMessage): boolean {
    if (x.paused) return false;
    if (!x.filter) return true;
    return x.filter.matches(input, (err) =>
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
  topic: string | null;
  subscription: string | null;
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
    r.topic,
    r.subscription,
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
