import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { OutgoingMessage } from "../../../src/contract/types.js";
import { PG_SCHEMA_VERSION } from "../../../src/store/postgres/migrations/index.js";
import { LATEST_SCHEMA_VERSION } from "../../../src/store/sqlite/migrations/index.js";
import { receiveOne, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§10 storage & schema", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
      await s.broker.createQueue("r");
    });
    afterEach(() => s.close());

    it("10.3 every stored time is epoch ms from the injected clock", async () => {
      s.clock.set(Date.UTC(2030, 5, 15, 12, 0, 0, 123));
      const t = s.clock.now();
      await s.broker.send("q", { body: "x" }, { ttlMs: 5000 });
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.enqueuedAt, t);
      assert.equal(m.lockedUntil, t + 1000);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.visibleAt, t);
      assert.equal(peeked?.expiresAt, t + 5000);
      s.clock.advance(250);
      assert.equal((await s.broker.stats("q")).oldestMessageAgeMs, 250);
    });

    it("10.x sequence numbers are strictly increasing and global across queues", async () => {
      const a = await s.broker.send("q", [{ body: "1" }, { body: "2" }]);
      const b = await s.broker.send("r", { body: "3" });
      const c = await s.broker.send("q", { body: "4" });
      const all = [...a, ...b, ...c];
      for (let i = 1; i < all.length; i++) assert.ok(all[i]! > all[i - 1]!, `${all}`);
    });

    it("10.x a sequence number is never reused, even after the newest message is deleted", async () => {
      await s.broker.send("q", { body: "a" });
      const [last] = await s.broker.send("r", { body: "b" });
      const m = await receiveOne(s.broker, "r");
      await s.broker.complete("r", m.seqNumber, m.lockToken);
      await s.broker.deleteQueue("q");
      await s.broker.createQueue("q");
      const [next] = await s.broker.send("q", { body: "c" });
      assert.ok(next! > last!);
    });

    it("10.x every stored field round-trips; the body byte for byte", async () => {
      const body = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);
      const out: OutgoingMessage = {
        body,
        messageId: "id-ü-1",
        correlationId: "corr",
        replyTo: "replies",
        groupId: "g",
        contentType: "application/octet-stream",
        subject: "orders.eu.created",
        properties: { tier: "gold", "emoji-😀": "✓", empty: "" },
      };
      const [seq] = await s.broker.send("q", out);
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.seqNumber, seq);
      assert.ok(Buffer.isBuffer(m.body));
      assert.deepEqual(m.body, body);
      assert.deepEqual(
        [m.messageId, m.correlationId, m.replyTo, m.groupId, m.contentType, m.subject],
        ["id-ü-1", "corr", "replies", "g", "application/octet-stream", "orders.eu.created"],
      );
      assert.deepEqual(m.properties, { tier: "gold", "emoji-😀": "✓", empty: "" });
      const [peeked] = await s.broker.peek("q");
      assert.deepEqual(peeked?.body, body);
      assert.deepEqual(peeked?.properties, m.properties);
    });

    it("10.x property names that are Object.prototype's own (__proto__, constructor) are ordinary keys", async () => {
      // JSON.parse makes "__proto__" an own key; an object literal needs a computed name for it.
      const properties: Record<string, string> = JSON.parse(
        '{"__proto__":"p","constructor":"c","toString":"t","hasOwnProperty":"h"}',
      );
      await s.broker.subscribe("t", "sub", { filter: 'properties["__proto__"] == "p"' });
      const [seq] = await s.broker.send("q", { body: "x", properties });
      assert.ok(seq! > 0);
      const m = await receiveOne(s.broker, "q");
      assert.deepEqual(Object.entries(m.properties ?? {}), Object.entries(properties));
      assert.equal(Object.getPrototypeOf(m.properties), Object.prototype);
      const [copy] = await s.broker.send("t", { body: "x", properties });
      assert.ok(copy! > 0, "the filter saw the __proto__ property");
      const [peeked] = await s.broker.peek("sub");
      assert.deepEqual(Object.entries(peeked?.properties ?? {}), Object.entries(properties));
    });

    it("10.x a string body is stored as its UTF-8 bytes", async () => {
      await s.broker.send("q", { body: "héllo ✓" });
      const [m] = await s.broker.peek("q");
      assert.deepEqual(m?.body, Buffer.from("héllo ✓", "utf8"));
    });

    it("10.x empty strings, an empty property map and an empty body come back omitted or empty", async () => {
      await s.broker.send("q", [
        {
          body: "",
          messageId: "",
          correlationId: "",
          replyTo: "",
          groupId: "",
          contentType: "",
          subject: "",
        },
        { properties: {} },
      ]);
      const got = await s.broker.receive("q", { maxMessages: 2 });
      for (const m of got) {
        assert.equal(m.body.length, 0);
        assert.ok(Buffer.isBuffer(m.body));
        for (const key of [
          "messageId",
          "correlationId",
          "replyTo",
          "groupId",
          "contentType",
          "subject",
          "properties",
        ]) {
          assert.equal(key in m, false, `${key} is omitted`);
        }
      }
    });

    it("10.x output-only fields in a send are ignored", async () => {
      const [seq] = await s.broker.send("q", {
        body: "x",
        seqNumber: 1,
        state: "dead_lettered",
        deliveryCount: 7,
        lockToken: "a".repeat(32),
        enqueuedAt: 5,
        expiresAt: 9,
        deadLetterReason: "nope",
      } as OutgoingMessage);
      const [m] = await s.broker.peek("q");
      assert.equal(m?.seqNumber, seq);
      assert.equal(m?.state, "active");
      assert.equal(m?.deliveryCount, 0);
      assert.equal(m?.enqueuedAt, s.clock.now());
      assert.equal(m?.expiresAt, undefined);
      assert.equal(m?.deadLetterReason, undefined);
    });

    it("1.8 receive output carries the delivery fields, not peek's state fields", async () => {
      await s.broker.send("q", { body: "x" }, { ttlMs: 5000 });
      const m = await receiveOne(s.broker, "q");
      for (const key of ["state", "visibleAt", "expiresAt", "deadLetterReason", "deadLetterDescription"]) {
        assert.equal(key in m, false, `${key} is not in a receive`);
      }
      assert.equal(m.deliveryCount, 1);
      assert.equal(typeof m.enqueuedAt, "number");
    });

    it("1.8 peek never shows a lock token", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      await s.broker.receive("q");
      const peeked = await s.broker.peek("q");
      assert.deepEqual(
        peeked.map((m) => m.state),
        ["locked", "active"],
      );
      assert.ok(peeked.every((m) => !("lockToken" in m)));
      assert.equal(peeked[0]?.lockedUntil, s.clock.now() + 1000);
      assert.equal(peeked[1]?.lockedUntil, undefined);
    });

    it("10.x status reports the store", async () => {
      await s.broker.subscribe("t", "sub");
      const started = await s.broker.status();
      assert.equal(typeof started.version, "string");
      assert.ok(
        [String(LATEST_SCHEMA_VERSION), String(PG_SCHEMA_VERSION)].includes(started.schemaVersion),
        `the schema this build writes, not ${started.schemaVersion}`,
      );
      assert.equal(started.queues, 2, "plain queues only");
      assert.equal(started.subscriptions, 1);
      assert.ok(started.pingMs >= 0, "the ping succeeded (a failed one reports -1)");
      s.clock.advance(5000);
      const later = await s.broker.status();
      assert.equal(later.uptimeMs - started.uptimeMs, 5000);
    });
  });

  describe("§10 storage across a restart", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory({ durable: true });
      assert.ok(s.restart);
      await s.broker.createQueue("q", {
        lockDurationMs: 1000,
        maxDeliveryCount: 4,
        orderingMode: "group_fifo",
      });
    });
    afterEach(() => s.close());

    it("15.3 committed messages, configs and subscriptions survive a restart", async () => {
      await s.broker.subscribe("t", "sub", { filter: "" });
      const sent = await s.broker.send("q", [
        { body: "a", groupId: "g", properties: { k: "v" } },
        { body: "b", groupId: "g" },
      ]);
      await s.broker.send("t", { body: "fan" });
      const queues = await s.broker.listQueues();
      const before = await s.broker.peek("q");
      await s.restart!();
      assert.deepEqual(await s.broker.listQueues(), queues);
      assert.deepEqual(await s.broker.peek("q"), before);
      assert.deepEqual(seqs(await s.broker.receive("q", { maxMessages: 10 })), [sent[0]]);
      assert.equal((await s.broker.stats("sub")).active, 1);
      assert.deepEqual(
        (await s.broker.listSubscriptions()).map((x) => [x.topic, x.name]),
        [["t", "sub"]],
      );
    });

    it("10.x the sequence high-water mark survives a restart", async () => {
      await s.broker.send("q", { body: "a", groupId: "g" });
      const [last] = await s.broker.send("q", { body: "b", groupId: "h" });
      const got = await s.broker.receive("q", { maxMessages: 2 });
      for (const m of got) await s.broker.complete("q", m.seqNumber, m.lockToken!);
      await s.restart!();
      const [next] = await s.broker.send("q", { body: "c", groupId: "g" });
      assert.ok(next! > last!);
    });
  });
});
