import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { DbLockedError, SchemaVersionMismatchError } from "../../../src/contract/errors.js";
import { PG_SCHEMA_VERSION } from "../../../src/store/postgres/migrations/index.js";
import { LATEST_SCHEMA_VERSION } from "../../../src/store/sqlite/migrations/index.js";
import { bodies, fails, receiveOne, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory, traits) => {
  describe("§10 one store, several openers; schema versions", () => {
    let s: Subject | undefined;
    afterEach(async () => {
      await s?.close();
      s = undefined;
    });

    // A deliberate difference: the original allows one writer per file. Here several processes may
    // open one file (SQLite serialises their writes) and `exclusive` restores the fail-fast rule.
    it("10.1 several openers share one store: a lock taken by one fences the others, a peer settles it", async () => {
      s = await factory({ durable: true });
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
      const peer = await s.openPeer!();
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const m = await receiveOne(peer, "q");
      assert.equal(m.seqNumber, a);
      assert.deepEqual(seqs(await s.broker.receive("q", { maxMessages: 10 })), [b], "the peer's lock holds");
      await peer.complete("q", m.seqNumber, m.lockToken);
      assert.deepEqual(seqs(await s.broker.peek("q")), [b]);
    });

    if (traits.store === "file") {
      it("10.1 exclusive: a second opener of the held file fails fast with db_locked", async () => {
        s = await factory({ durable: true, exclusive: true });
        await s.broker.createQueue("q");
        const started = Date.now();
        await fails(s.openPeer!(), DbLockedError, "db_locked");
        assert.ok(Date.now() - started < 3000, "fails fast, without waiting out a busy timeout");
        await s.broker.send("q", { body: "still served" });
        assert.deepEqual(bodies(await s.broker.peek("q")), ["still served"]);
      });
    } else {
      it("10.1 a database server has no exclusive mode: several nodes work one database at once", async () => {
        s = await factory({ durable: true });
        await s.broker.createQueue("q", { lockDurationMs: 1000 });
        const nodes = [s.broker, await s.openPeer!(), await s.openPeer!()];
        const sent = await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
        const got = await Promise.all(nodes.map((n) => receiveOne(n, "q")));
        assert.deepEqual(
          seqs(got).sort((x, y) => x - y),
          sent,
          "each node claimed a different message",
        );
        await Promise.all(got.map((m, i) => nodes[i]!.complete("q", m.seqNumber, m.lockToken)));
        assert.equal((await s.broker.stats("q")).total, 0);
      });
    }

    // A deliberate difference: open migrates an older store forward (test/store/migrations,
    // test/postgres/schema); what it refuses is a store written by a newer build.
    it("10.2 a store written by a newer schema is refused with schema_version_mismatch", async () => {
      s = await factory({ durable: true });
      const built = traits.store === "file" ? LATEST_SCHEMA_VERSION : PG_SCHEMA_VERSION;
      assert.equal((await s.broker.status()).schemaVersion, String(built));
      await fails(
        s.restartAtSchemaVersion!(built + 1),
        SchemaVersionMismatchError,
        "schema_version_mismatch",
      );
    });
  });

  describe("§15 crash recovery", () => {
    let s: Subject | undefined;
    afterEach(async () => {
      await s?.close();
      s = undefined;
    });

    it("15.1 outbox: the application's row and the message commit together or not at all", async () => {
      s = await factory({ durable: true });
      await s.broker.createQueue("q");
      const outbox = s.outbox!;
      await outbox.setup();
      await outbox.place("o1", "q", "order o1", false);
      await assert.rejects(outbox.place("o2", "q", "order o2", true), /refused after its message was sent/);
      assert.equal(await outbox.count("o1"), 1);
      assert.equal(await outbox.count("o2"), 0, "the failed transaction left no row");
      assert.deepEqual(bodies(await s.broker.peek("q")), ["order o1"], "and no message");
      await s.restart!();
      assert.equal(await outbox.count("o1"), 1);
      assert.deepEqual(bodies(await s.broker.peek("q")), ["order o1"]);
    });

    // Several openers may share a store (10.1), so a lease that is still live may be another
    // opener's: start-up resets only the lapsed ones; a live one lapses and is reaped as usual.
    it("15.2 orphaned locks are reset on restart once lapsed; the next delivery counts 2", async () => {
      s = await factory({ durable: true });
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 5 });
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const first = await receiveOne(s.broker, "q");
      s.clock.advance(600);
      const second = await receiveOne(s.broker, "q");
      assert.deepEqual([first.seqNumber, second.seqNumber], [a, b]);
      s.clock.advance(500);
      await s.restart!();
      assert.deepEqual(
        (await s.broker.peek("q")).map((m) => [m.seqNumber, m.state]),
        [
          [a, "active"],
          [b, "locked"],
        ],
        "reset by the start-up pass itself, before any maintenance",
      );
      const again = await receiveOne(s.broker, "q");
      assert.equal(again.seqNumber, a);
      assert.equal(again.deliveryCount, 2);
      await s.broker.complete("q", b!, second.lockToken);
      await s.broker.complete("q", a!, again.lockToken);
      assert.equal((await s.broker.stats("q")).total, 0);
    });
  });
});
