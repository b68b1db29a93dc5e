import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { brokerWithAdmin, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

/** Lets a long-poll park (its claim found nothing). */
const parked = () => sleep(50);

/**
 * Records the statements this process sends to the server until `stop()`: the claims among them
 * (`FOR UPDATE OF m`) and the sends (`INSERT INTO messages`).
 */
function spyStatements(): { claims: () => number; sends: () => number; stop: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  let claims = 0;
  let sends = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === "string" ? config : ((config as { text?: string })?.text ?? "");
    if (text.includes("FOR UPDATE OF m")) claims++;
    if (text.includes("INSERT INTO messages")) sends++;
    return query.apply(this, args);
  };
  return { claims: () => claims, sends: () => sends, stop: () => (proto.query = query) };
}

describe("PostgreSQL hand-off: a send stores its messages locked for a receiver parked on the node", () => {
  let b: PostgresBroker;
  let admin: pg.Client;
  let schema: string;
  let close: () => Promise<void>;
  let n = 0;
  /** A fresh queue per test. */
  const queue = async (config = {}) => {
    const name = `q${n++}`;
    await b.createQueue(name, config);
    // The first send caches the queue's row; only sends of a cached row go as one statement.
    await b.send(name, { body: "warm" });
    const [w] = await b.receive(name);
    await b.complete(name, w!.seqNumber, w!.lockToken!);
    return name;
  };
  const states = async (q: string) => (await b.peek(q)).map((m) => `${m.body}:${m.state}`);

  before(async () => {
    ({ broker: b, admin, schema, close } = await brokerWithAdmin("mqhand"));
  });
  after(() => close());

  it("a parked receive gets the message from the send's statement, without a claim of its own", async () => {
    const q = await queue({ lockDurationMs: 45_000 });
    const waiting = b.receive(q, { waitMs: 5000 });
    await parked();
    const spy = spyStatements();
    const [seq] = await b.send(q, { body: "hello", subject: "s", properties: { k: "v" } });
    const [m] = await waiting;
    spy.stop();
    assert.equal(spy.sends(), 1);
    assert.equal(spy.claims(), 0, "the receiver claimed nothing itself");
    assert.equal(m?.seqNumber, seq);
    assert.equal(m?.body.toString(), "hello");
    assert.equal(m?.subject, "s");
    assert.deepEqual(m?.properties, { k: "v" });
    assert.equal(m?.deliveryCount, 1);
    assert.equal(m!.lockedUntil! - m!.enqueuedAt, 45_000);
    assert.deepEqual(await states(q), ["hello:locked"]);
    // Stats counts it as the locked message it was stored as.
    const s = await b.stats(q);
    assert.deepEqual([s.active, s.locked], [0, 1]);
    // The lock is the one stored: it settles.
    await b.complete(q, m!.seqNumber, m!.lockToken!);
    assert.deepEqual(await states(q), []);
    assert.equal((await b.stats(q)).total, 0);
  });

  it("hands what the claim would take: priority first, at most max_messages; the rest stay claimable", async () => {
    const q = await queue();
    const waiting = b.receive(q, { waitMs: 5000, maxMessages: 2 });
    await parked();
    await b.send(q, [
      { body: "a", priority: 0 },
      { body: "b", priority: 5 },
      { body: "c", priority: 5 },
      { body: "d", priority: 1 },
    ]);
    assert.deepEqual(
      (await waiting).map((m) => m.body.toString()),
      ["b", "c"],
    );
    assert.deepEqual(await states(q), ["a:active", "b:locked", "c:locked", "d:active"]);
    assert.deepEqual(
      (await b.receive(q, { maxMessages: 5 })).map((m) => m.body.toString()),
      ["d", "a"],
    );
  });

  it("receiveAny of one queue: its lease cap and its name for the queue", async () => {
    const q = await queue({ lockDurationMs: 60_000 });
    const waiting = b.receiveAny([q], { waitMs: 5000, maxMessages: 2, lockDurationMs: 20_000 });
    await parked();
    await b.send(q, [{ body: "capped" }, { body: "own", lockDurationMs: 10_000 }]);
    const got = await waiting;
    assert.deepEqual(
      got.map((m) => [m.queue, m.body.toString(), m.lockedUntil! - m.enqueuedAt]),
      [
        [q, "capped", 20_000],
        [q, "own", 10_000],
      ],
    );
  });

  it("an older claimable row the receiver has not seen comes first: no hand-off, the receiver claims it", async () => {
    const q = await queue();
    const waiting = b.receive(q, { waitMs: 5000 });
    await parked();
    // A row no one announced (as if another node's notification were still on its way).
    await admin.query(
      `INSERT INTO "${schema}".messages (queue, state, priority, visible_at, enqueued_at, body)
       VALUES ($1, 'active', 3, 0, 0, 'older')`,
      [q],
    );
    await b.send(q, { body: "newer", priority: 3 });
    assert.deepEqual(
      (await waiting).map((m) => m.body.toString()),
      ["older"],
    );
    assert.deepEqual(await states(q), ["older:locked", "newer:active"]);
  });

  it("an older claimable row of lower priority does not stop the hand-off (the claim would skip it too)", async () => {
    const q = await queue();
    const waiting = b.receive(q, { waitMs: 5000 });
    await parked();
    await admin.query(
      `INSERT INTO "${schema}".messages (queue, state, priority, visible_at, enqueued_at, body)
       VALUES ($1, 'active', 0, 0, 0, 'low')`,
      [q],
    );
    await b.send(q, { body: "high", priority: 1 });
    assert.deepEqual(
      (await waiting).map((m) => m.body.toString()),
      ["high"],
    );
    assert.deepEqual(await states(q), ["low:active", "high:locked"]);
  });

  it("an older row its group holds back does not stop the hand-off (the claim would skip it too)", async () => {
    const q = await queue();
    // A group whose first message is locked: its second waits behind it, active but not claimable.
    await b.send(q, [
      { body: "g1", groupId: "g" },
      { body: "g2", groupId: "g" },
    ]);
    const [first] = await b.receive(q);
    assert.equal(first?.body.toString(), "g1");
    const waiting = b.receive(q, { waitMs: 5000 });
    await parked();
    const spy = spyStatements();
    await b.send(q, { body: "newer" });
    const got = await waiting;
    spy.stop();
    assert.deepEqual(
      got.map((m) => m.body.toString()),
      ["newer"],
    );
    assert.equal(spy.claims(), 0, "the send's statement handed it over: the receiver claimed nothing itself");
    assert.deepEqual(await states(q), ["g1:locked", "g2:active", "newer:locked"]);
  });

  it("a send that fails stores nothing and locks nothing: the receiver stays parked for the next", async () => {
    const q = await queue();
    await admin.query(`
      CREATE FUNCTION "${schema}".refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.body = 'boom' THEN RAISE EXCEPTION 'refused'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON "${schema}".messages
        FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse_boom();`);
    try {
      const waiting = b.receive(q, { waitMs: 5000 });
      await parked();
      await assert.rejects(b.send(q, { body: "boom" }), /refused/);
      await parked();
      assert.deepEqual(await states(q), []);
      await b.send(q, { body: "fine" });
      assert.deepEqual(
        (await waiting).map((m) => m.body.toString()),
        ["fine"],
      );
      assert.deepEqual(await states(q), ["fine:locked"]);
    } finally {
      await admin.query(`DROP TRIGGER refuse_boom ON "${schema}".messages`);
    }
  });

  it("a stale cached queue row: the send goes the long way and the woken receiver claims it", async () => {
    const q = await queue();
    const other = await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, background: false });
    try {
      const waiting = b.receive(q, { waitMs: 5000 });
      await parked();
      // Another node changes the queue's config: this node's cached row is stale.
      await other.createQueue(q, { lockDurationMs: 50_000 });
      await b.send(q, { body: "late" });
      const [m] = await waiting;
      assert.equal(m?.body.toString(), "late");
      assert.equal(m!.lockedUntil! - m!.enqueuedAt >= 50_000, true);
      assert.deepEqual(await states(q), ["late:locked"]);
    } finally {
      await other.close();
    }
  });

  it("two parked receivers: the first parked gets the message, the other nothing", async () => {
    const q = await queue();
    const first = b.receive(q, { waitMs: 5000 });
    await parked();
    const second = b.receive(q, { waitMs: 400 });
    await parked();
    await b.send(q, { body: "one" });
    const [one, two] = await Promise.all([first, second]);
    assert.deepEqual(
      one.map((m) => m.body.toString()),
      ["one"],
    );
    assert.deepEqual(two, []);
  });

  it("not to an aborted receive, nor to a receive-and-delete or a delayed send", async () => {
    const q = await queue();
    const abort = new AbortController();
    const aborted = b.receive(q, { waitMs: 5000, signal: abort.signal });
    await parked();
    abort.abort();
    await b.send(q, { body: "x" });
    assert.deepEqual(await aborted, []);
    assert.deepEqual(await states(q), ["x:active"]);

    const r = await queue();
    const deleting = b.receive(r, { waitMs: 5000, mode: "receive-and-delete" });
    await parked();
    await b.send(r, { body: "y" });
    assert.deepEqual(
      (await deleting).map((m) => [m.body.toString(), m.lockToken]),
      [["y", undefined]],
    );
    assert.deepEqual(await states(r), []);

    const waiting = b.receive(r, { waitMs: 400 });
    await parked();
    await b.send(r, { body: "later", delayMs: 60_000 });
    assert.deepEqual(await waiting, []);
    assert.deepEqual(await states(r), ["later:scheduled"]);
  });

  it("a parked receiver claims once before it parks (no second claim when nothing was announced)", async () => {
    const q = await queue();
    const spy = spyStatements();
    const waiting = b.receive(q, { waitMs: 300 });
    await parked();
    const parkedClaims = spy.claims();
    const got = await waiting;
    spy.stop();
    assert.deepEqual(got, []);
    assert.equal(parkedClaims, 1);
    // The deadline's last look.
    assert.equal(spy.claims(), 2);
  });

  it("back from a hand-off, a receiver parks again without a claim while nothing was announced", async () => {
    const q = await queue();
    const first = b.receive(q, { waitMs: 5000 });
    await parked();
    await b.send(q, { body: "one" });
    const [m1] = await first;
    assert.equal(m1?.body.toString(), "one");
    await b.complete(q, m1!.seqNumber, m1!.lockToken!);
    const spy = spyStatements();
    const again = b.receive(q, { waitMs: 5000 });
    await parked();
    const [seq] = await b.send(q, { body: "two" });
    const [m2] = await again;
    spy.stop();
    assert.equal(m2?.seqNumber, seq, "handed over");
    assert.equal(spy.claims(), 0, "no claim: the queue was known drained");
  });

  // Each receive below would wait out its 5 s were the change it should see not announced.
  it("back from a hand-off, a receiver claims what was announced meanwhile: a send, a group's next message", {
    timeout: 4000,
  }, async () => {
    const q = await queue();
    const first = b.receive(q, { waitMs: 5000 });
    await parked();
    await b.send(q, { body: "one" });
    const [m1] = await first;
    // Sent while no receiver is parked: announced, so the next receive claims before parking.
    const [sent] = await b.send(q, { body: "meanwhile" });
    const spy = spyStatements();
    assert.deepEqual(
      (await b.receive(q, { waitMs: 5000 })).map((m) => m.seqNumber),
      [sent],
    );
    spy.stop();
    assert.equal(spy.claims(), 1);
    await b.complete(q, m1!.seqNumber, m1!.lockToken!);

    // A group's head is held by another consumer; a hand-off (of a higher priority: a claimable row
    // of the same or more would stop it) leaves the queue looking drained until that head settles,
    // which announces its successor.
    const [, g2] = await b.send(q, [
      { body: "g1", groupId: "g" },
      { body: "g2", groupId: "g" },
    ]);
    const [head] = await b.receive(q);
    const parkedOne = b.receive(q, { waitMs: 5000 });
    await parked();
    await b.send(q, { body: "handed", priority: 5 });
    const [handed] = await parkedOne;
    assert.equal(handed?.body.toString(), "handed");
    await b.complete(q, head!.seqNumber, head!.lockToken!);
    assert.deepEqual(
      (await b.receive(q, { waitMs: 5000 })).map((m) => m.seqNumber),
      [g2],
    );
  });
});
