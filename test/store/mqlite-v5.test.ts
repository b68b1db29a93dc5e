import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { LockLostError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { LATEST_SCHEMA_VERSION } from "../../src/store/sqlite/migrations/index.js";
import { LAPSED, LIVE, NOW, RECEIPT, writeV5File } from "../support/mqlite-v5-file.js";
import { tempDir } from "../support/temp.js";

const quiet = { background: false, logger: silentLogger } as const;

describe("store: a MQLite (schema 5) file opens in place", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("keeps every queue, subscription, message, lease, dedup entry and receipt, after a backup", async () => {
    const path = tmp.file("mq.db");
    writeV5File(path);
    const clock = new ManualClock(NOW);
    const broker = await openBroker(path, { ...quiet, clock });
    try {
      const backup = new Database(`${path}.v5.bak`, { readonly: true });
      assert.equal(backup.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), "5");
      assert.equal(backup.prepare("SELECT count(*) FROM messages").pluck().get(), 8);
      backup.close();

      assert.deepEqual(await broker.listQueues(), [
        {
          name: "audit",
          kind: "subscription",
          lockDurationMs: 30_000,
          maxDeliveryCount: 10,
          defaultTtlMs: 0,
          deadLetterOnExpire: true,
          dedupWindowMs: 0,
          orderingMode: "standard",
          dlqMaxAgeMs: 0,
          dlqMaxCount: 0,
          dlqMaxBytes: 0,
        },
        {
          name: "firehose",
          kind: "subscription",
          lockDurationMs: 30_000,
          maxDeliveryCount: 10,
          defaultTtlMs: 0,
          deadLetterOnExpire: true,
          dedupWindowMs: 0,
          orderingMode: "standard",
          dlqMaxAgeMs: 0,
          dlqMaxCount: 0,
          dlqMaxBytes: 0,
        },
        {
          name: "orders",
          kind: "queue",
          lockDurationMs: 60_000,
          maxDeliveryCount: 5,
          defaultTtlMs: 3_600_000,
          deadLetterOnExpire: false,
          dedupWindowMs: 600_000,
          orderingMode: "group_fifo",
          dlqMaxAgeMs: 86_400_000,
          dlqMaxCount: 1000,
          dlqMaxBytes: -1,
        },
        {
          name: "strict",
          kind: "queue",
          lockDurationMs: 30_000,
          maxDeliveryCount: 10,
          defaultTtlMs: 0,
          deadLetterOnExpire: true,
          dedupWindowMs: 0,
          orderingMode: "strict_fifo",
          dlqMaxAgeMs: 0,
          dlqMaxCount: 0,
          dlqMaxBytes: 0,
        },
      ]);
      const subs = (await broker.listSubscriptions()).map((s) => [s.topic, s.name, s.filter]);
      assert.deepEqual(subs, [
        ["events", "audit", 'subject == "x"'],
        ["events", "firehose", undefined],
      ]);

      const peeked = (await broker.peek("orders")).map((m) => ({
        seq: m.seqNumber,
        state: m.state,
        body: m.body.toString(),
        count: m.deliveryCount,
        lockedUntil: m.lockedUntil,
        visibleAt: m.visibleAt,
        reason: m.deadLetterReason,
        description: m.deadLetterDescription,
      }));
      assert.deepEqual(peeked, [
        {
          seq: 3,
          state: "active",
          body: "active",
          count: 0,
          lockedUntil: undefined,
          visibleAt: NOW - 100,
          reason: undefined,
          description: undefined,
        },
        {
          seq: 5,
          state: "locked",
          body: "live",
          count: 1,
          lockedUntil: NOW + 30_000,
          visibleAt: NOW - 100,
          reason: undefined,
          description: undefined,
        },
        {
          seq: 6,
          state: "active",
          body: "lapsed",
          count: 2,
          lockedUntil: undefined,
          visibleAt: NOW - 100,
          reason: undefined,
          description: undefined,
        },
        {
          seq: 8,
          state: "deferred",
          body: "deferred",
          count: 1,
          lockedUntil: undefined,
          visibleAt: NOW - 100,
          reason: undefined,
          description: undefined,
        },
        {
          seq: 9,
          state: "scheduled",
          body: "scheduled",
          count: 0,
          lockedUntil: undefined,
          visibleAt: NOW + 60_000,
          reason: undefined,
          description: undefined,
        },
        {
          seq: 10,
          state: "dead_lettered",
          body: "dead",
          count: 5,
          lockedUntil: undefined,
          visibleAt: NOW - 100,
          reason: "AppRequested",
          description: "bad",
        },
      ]);
      const [first] = await broker.peek("orders", { max: 1 });
      assert.deepEqual(
        {
          messageId: first?.messageId,
          correlationId: first?.correlationId,
          replyTo: first?.replyTo,
          groupId: first?.groupId,
          contentType: first?.contentType,
          subject: first?.subject,
          properties: first?.properties,
          enqueuedAt: first?.enqueuedAt,
          expiresAt: first?.expiresAt,
        },
        {
          messageId: "m-3",
          correlationId: "c",
          replyTo: "r",
          groupId: "g1",
          contentType: "text/plain",
          subject: "s",
          properties: { k: "v" },
          enqueuedAt: NOW - 100,
          expiresAt: NOW + 3_500_000,
        },
      );

      // A retried receive replays its stored batch: the same message and token, no new delivery.
      const replayed = await broker.receive("orders", { attemptId: "attempt-1" });
      assert.deepEqual(
        replayed.map((m) => [m.seqNumber, m.lockToken, m.deliveryCount, m.body.toString()]),
        [[5, LIVE, 1, "live"]],
      );
      // The live lease's token settles. A lease that had lapsed was taken back at open (as any
      // open reclaims lapsed leases): its token is lock_lost.
      await broker.complete("orders", 5, LIVE);
      await assert.rejects(broker.complete("orders", 6, LAPSED), LockLostError);
      // The receipt answers its exact replay.
      await broker.complete("orders", 40, RECEIPT);
      await assert.rejects(broker.abandon("orders", 40, RECEIPT), LockLostError);

      // Dedup still dedups: the same id and body answers the first seq and stores nothing.
      const before = (await broker.stats("orders")).total;
      assert.deepEqual(await broker.send("orders", { messageId: "m-3", body: "active", groupId: "g1" }), [3]);
      assert.equal((await broker.stats("orders")).total, before);

      // New numbers continue above every number MQLite handed out.
      const [fresh] = await broker.send("orders", { body: "new", groupId: "g9" });
      assert.ok(fresh! > 100, `seq ${fresh}`);

      // The subscription's filter still routes.
      await broker.send("events", [
        { body: "x", subject: "x" },
        { body: "y", subject: "y" },
      ]);
      assert.deepEqual(
        (await broker.peek("audit")).map((m) => m.body.toString()),
        ["audited", "x"],
      );
      assert.deepEqual(
        (await broker.peek("firehose")).map((m) => m.body.toString()),
        ["x", "y"],
      );
      // Ordering modes hold: a strict queue delivers its head only.
      assert.deepEqual(
        (await broker.receive("strict", { maxMessages: 5 })).map((m) => m.seqNumber),
        [11],
      );
    } finally {
      await broker.close();
    }
    const db = new Database(path, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .all() as string[];
    assert.ok(!tables.includes("meta") && !tables.some((t) => t.startsWith("v5_")), tables.join(", "));
    assert.equal(db.prepare("SELECT max(version) FROM schema_version").pluck().get(), LATEST_SCHEMA_VERSION);
    db.close();
  });

  it("an upgrade that fails part-way leaves the file as MQLite wrote it (one transaction)", () => {
    const path = tmp.file("fails.db");
    writeV5File(path, 25_000);
    let calls = 0;
    assert.throws(
      () =>
        openDatabase(path, {
          now: NOW,
          onV5Progress: () => {
            if (++calls === 2) throw new Error("interrupted");
          },
        }),
      /interrupted/,
    );
    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get(), "5");
    assert.equal(db.prepare("SELECT count(*) FROM messages").pluck().get(), 25_008);
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .all() as string[];
    assert.ok(!tables.includes("schema_version"), tables.join(", "));
    db.close();
    // Opened again, it upgrades, reporting the copy in chunks up to the total.
    const seen: [number, number][] = [];
    let report: unknown;
    const upgraded = openDatabase(path, {
      now: NOW,
      onV5Progress: (done, total) => seen.push([done, total]),
      onV5Import: (counts, backup) => {
        report = { counts, backup };
      },
    });
    upgraded.close();
    assert.deepEqual(seen, [
      [0, 25_008],
      [10_000, 25_008],
      [20_000, 25_008],
      [25_008, 25_008],
    ]);
    assert.deepEqual(report, {
      counts: { queues: 4, subscriptions: 2, messages: 25_008, dedup: 1, receipts: 1, receiveAttempts: 1 },
      backup: `${path}.v5.bak`,
    });
    assert.ok(existsSync(`${path}.v5.bak`));
  });
});
