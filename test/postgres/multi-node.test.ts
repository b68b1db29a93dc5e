import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import type { Message } from "../../src/contract/types.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Producers and consumers spread across two broker nodes over one database: every message is
 * delivered to one live lock holder at a time, none is lost, and the ordering rules hold across
 * nodes (group_fifo: one in flight per group, in sequence order; strict_fifo: one in flight per
 * queue, in sequence order).
 */
describe("two PostgreSQL broker nodes over one database", () => {
  const schema = freshSchema("mqnodes");
  let a: PostgresBroker;
  let b: PostgresBroker;

  before(async () => {
    const open = () =>
      PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger, poolSize: 6 });
    a = await open();
    b = await open();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema);
  });

  /** Sends `perNode` messages from each of four producers, two per node (in groups when `groups` > 0), concurrently. */
  async function produce(queue: string, perNode: number, groups: number): Promise<Set<number>> {
    const sent = new Set<number>();
    const producer = async (broker: Broker, node: string) => {
      for (let i = 0; i < perNode; i += 5) {
        const batch = Array.from({ length: 5 }, (_, k) => ({
          body: `${node}-${i + k}`,
          groupId: groups > 0 ? `g${(i + k) % groups}` : undefined,
        }));
        for (const seq of await broker.send(queue, batch)) sent.add(seq);
      }
    };
    await Promise.all([producer(a, "a"), producer(a, "a2"), producer(b, "b"), producer(b, "b2")]);
    return sent;
  }

  /**
   * Consumes from both nodes with `perNode` consumers each until `total` messages were completed,
   * checking on every claim that no other holder has the same line (`lineOf`) in flight.
   */
  async function consume(queue: string, total: number, lineOf: (m: Message) => string | undefined) {
    const inFlight = new Map<string, number>();
    const order = new Map<string, number[]>();
    const completed = new Set<number>();
    const violations: string[] = [];
    let done = false;
    const consumer = async (broker: Broker) => {
      while (!done) {
        const got = await broker.receive(queue, { maxMessages: 4, waitMs: 200 });
        for (const m of got) {
          const line = lineOf(m);
          if (line !== undefined) {
            const other = inFlight.get(line);
            if (other !== undefined)
              violations.push(`${line}: ${m.seqNumber} claimed while ${other} is held`);
            inFlight.set(line, m.seqNumber);
            const seen = order.get(line) ?? [];
            seen.push(m.seqNumber);
            order.set(line, seen);
          }
          if (completed.has(m.seqNumber)) violations.push(`${m.seqNumber} delivered again after completion`);
        }
        await sleep(Math.random() * 3);
        for (const m of got) {
          const line = lineOf(m);
          // The line is free from the moment its holder settles.
          if (line !== undefined && inFlight.get(line) === m.seqNumber) inFlight.delete(line);
          await broker.complete(queue, m.seqNumber, m.lockToken!);
          completed.add(m.seqNumber);
        }
        if (completed.size >= total) done = true;
      }
    };
    const deadline = setTimeout(() => {
      done = true;
    }, 60_000);
    await Promise.all([consumer(a), consumer(a), consumer(a), consumer(b), consumer(b), consumer(b)]);
    clearTimeout(deadline);
    return { completed, order, violations };
  }

  function assertAscending(order: Map<string, number[]>): void {
    for (const [line, seqs] of order) {
      const sorted = [...seqs].sort((x, y) => x - y);
      assert.deepEqual(seqs, sorted, `line ${line} was delivered out of sequence order`);
    }
  }

  it("standard: no double delivery, nothing lost", async () => {
    await a.createQueue("std");
    const [sent, { completed, violations }] = await Promise.all([
      produce("std", 200, 0),
      consume("std", 4 * 200, () => undefined),
    ]);
    assert.deepEqual(violations, []);
    assert.equal(completed.size, sent.size);
    assert.deepEqual(
      [...completed].sort((x, y) => x - y),
      [...sent].sort((x, y) => x - y),
    );
    assert.equal((await b.stats("std")).total, 0);
  });

  it("group_fifo: one message per group in flight across nodes, each group in sequence order", async () => {
    await b.createQueue("grp", { orderingMode: "group_fifo" });
    const [sent, { completed, order, violations }] = await Promise.all([
      produce("grp", 150, 6),
      consume("grp", 4 * 150, (m) => m.groupId),
    ]);
    assert.deepEqual(violations, []);
    assert.equal(completed.size, sent.size);
    assertAscending(order);
    assert.equal((await a.stats("grp")).total, 0);
  });

  it("strict_fifo: one message in flight per queue across nodes, in sequence order", async () => {
    await a.createQueue("strict", { orderingMode: "strict_fifo" });
    const [sent, { completed, order, violations }] = await Promise.all([
      produce("strict", 60, 0),
      consume("strict", 4 * 60, () => "queue"),
    ]);
    assert.deepEqual(violations, []);
    assert.equal(completed.size, sent.size);
    assertAscending(order);
  });

  for (const orderingMode of ["group_fifo", "strict_fifo"] as const) {
    it(`${orderingMode}: a send committing late never lets a later send of its line overtake it`, async () => {
      const queue = `race-${orderingMode}`;
      await a.createQueue(queue, { orderingMode });
      // Node a sends inside a transaction that stays open after its insert…
      let inserted!: () => void;
      const insertedP = new Promise<void>((r) => {
        inserted = r;
      });
      const slow = a.tx(async (t) => {
        const [seq] = await t.send(queue, { body: "first", groupId: "g" });
        inserted();
        await sleep(400);
        return seq!;
      });
      await insertedP;
      // …while node b sends the next message of the same line and a consumer on b waits for work.
      const fast = b.send(queue, { body: "second", groupId: "g" });
      const got = await b.receive(queue, { waitMs: 3000 });
      const [firstSeq, [secondSeq]] = await Promise.all([slow, fast]);
      assert.deepEqual(
        got.map((m) => m.body.toString()),
        ["first"],
        "the line's first message is delivered first",
      );
      assert.ok(secondSeq! > firstSeq, "ids within a line follow commit order");
      assert.deepEqual(await a.receive(queue), [], "one in flight per line");
      await b.complete(queue, got[0]!.seqNumber, got[0]!.lockToken!);
      const [next] = await a.receive(queue);
      assert.equal(next?.body.toString(), "second");
      await a.complete(queue, next!.seqNumber, next!.lockToken!);
    });
  }

  it("a send on one node wakes a long-poll parked on the other", async () => {
    await a.createQueue("wake");
    const started = Date.now();
    const parked = b.receive("wake", { waitMs: 10_000 });
    await sleep(100);
    const [seq] = await a.send("wake", { body: "ping" });
    const got = await parked;
    assert.equal(got[0]?.seqNumber, seq);
    assert.ok(Date.now() - started < 5000, "woken by the notification, not by the deadline");
    await b.complete("wake", seq!, got[0]!.lockToken!);
  });

  it("a queue created or reconfigured on one node is seen at once by the other", async () => {
    await a.createQueue("cfg", { lockDurationMs: 60_000 });
    await b.send("cfg", { body: "x" });
    const [m1] = await b.receive("cfg");
    assert.equal(m1!.lockedUntil! - Date.now() > 50_000, true);
    await b.abandon("cfg", m1!.seqNumber, m1!.lockToken!);
    await a.createQueue("cfg", { lockDurationMs: 5_000 });
    const [m2] = await b.receive("cfg");
    assert.ok(m2!.lockedUntil! - Date.now() <= 5_000, "node b used node a's new lock duration");
    await a.deleteQueue("cfg");
    await assert.rejects(b.receive("cfg"), (err: Error) => (err as { code?: string }).code === "not_found");
  });
});

/** The same, through two served brokers on two ports over one database, driven by remote clients. */
describe("two served brokers on PostgreSQL over one database", () => {
  const schema = freshSchema("mqserved");
  const servers: RunningServer[] = [];
  const quiet = { level: "silent" } as const;

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const broker = await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, poolSize: 6 });
      const { pino } = await import("pino");
      servers.push(await startServer({ broker, port: 0, logger: pino(quiet) }));
    }
  });
  after(async () => {
    for (const s of servers) await s.close();
    await dropSchema(schema);
  });

  it("group_fifo through HTTP on both ports: one in flight per group, in order, nothing lost", async () => {
    const [x, y] = servers.map((s) => connect(s.url)) as [Broker, Broker];
    await x.createQueue("orders", { orderingMode: "group_fifo" });
    const perProducer = 40;
    const producers = [x, y, x, y].map(async (client, p) => {
      const seqs: number[] = [];
      for (let i = 0; i < perProducer; i += 4) {
        const batch = Array.from({ length: 4 }, (_, k) => ({
          body: `p${p}-${i + k}`,
          groupId: `g${(i + k) % 5}`,
        }));
        seqs.push(...(await client.send("orders", batch)));
      }
      return seqs;
    });
    const total = 4 * perProducer;
    const inFlight = new Map<string, number>();
    const order = new Map<string, number[]>();
    const completed = new Set<number>();
    const violations: string[] = [];
    const until = Date.now() + 60_000;
    const consumer = async (client: Broker) => {
      while (completed.size < total && Date.now() < until) {
        const got = await client.receive("orders", { maxMessages: 3, waitMs: 200 });
        for (const m of got) {
          const g = m.groupId!;
          if (inFlight.has(g))
            violations.push(`${g}: ${m.seqNumber} claimed while ${inFlight.get(g)} is held`);
          inFlight.set(g, m.seqNumber);
          order.set(g, [...(order.get(g) ?? []), m.seqNumber]);
        }
        for (const m of got) {
          if (inFlight.get(m.groupId!) === m.seqNumber) inFlight.delete(m.groupId!);
          await client.complete("orders", m.seqNumber, m.lockToken!);
          if (completed.has(m.seqNumber)) violations.push(`${m.seqNumber} completed twice`);
          completed.add(m.seqNumber);
        }
      }
    };
    const [sent] = await Promise.all([
      Promise.all(producers).then((all) => all.flat()),
      consumer(x),
      consumer(y),
      consumer(x),
      consumer(y),
    ]);
    assert.deepEqual(violations, []);
    assert.deepEqual(
      [...completed].sort((p, q) => p - q),
      [...sent].sort((p, q) => p - q),
    );
    for (const [g, seqs] of order) {
      assert.deepEqual(
        seqs,
        [...seqs].sort((p, q) => p - q),
        `group ${g} in sequence order`,
      );
    }
  });
});
