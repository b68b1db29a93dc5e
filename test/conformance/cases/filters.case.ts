import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError } from "../../../src/contract/errors.js";
import type { OutgoingMessage } from "../../../src/contract/types.js";
import { bodies, fails, snapshotAll } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

/** Filters that must not compile: malformed, unknown identifiers and functions, non-bool results. */
const BAD_FILTERS = [
  "subject ==",
  'nope == "x"',
  "frobnicate(subject)",
  "subject",
  "body_size + 1",
  "[1,2,3]",
  "not json",
  `subject == "${"x".repeat(4100)}"`,
  Array.from({ length: 600 }, () => "true").join(" && "),
];

cases((factory) => {
  describe("§11 subscription filters", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.subscribe("t", "all");
    });
    afterEach(() => s.close());

    /** Subscribes `name` to `t` with `filter`, publishes `messages`, and returns the bodies it got. */
    async function routed(filter: string, messages: OutgoingMessage[]): Promise<string[]> {
      await s.broker.subscribe("t", "f", { filter });
      await s.broker.send("t", messages);
      return bodies(await s.broker.peek("f", { max: 1000 }));
    }

    it("11.1 an empty or absent filter matches every message", async () => {
      await s.broker.subscribe("t", "empty", { filter: "" });
      await s.broker.subscribe("t", "blank", { filter: "  " });
      await s.broker.send("t", [{ body: "a" }, { body: "b", subject: "x.y" }]);
      for (const q of ["all", "empty", "blank"]) assert.deepEqual(bodies(await s.broker.peek(q)), ["a", "b"]);
    });

    for (const filter of BAD_FILTERS) {
      it(`11.1 a bad filter is invalid_argument at subscribe, with nothing stored: ${filter.slice(0, 40)}`, async () => {
        const before = await snapshotAll(s.broker);
        await fails(s.broker.subscribe("t", "bad", { filter }), InvalidArgumentError, "invalid_argument");
        await fails(
          s.broker.subscribe("fresh-topic", "bad", { filter }),
          InvalidArgumentError,
          "invalid_argument",
        );
        await fails(s.broker.subscribe("t", "all", { filter }), InvalidArgumentError, "invalid_argument");
        assert.deepEqual(
          await snapshotAll(s.broker),
          before,
          "no backing queue, no subscription, old filter kept",
        );
      });
    }

    it("11.1 a filter of exactly 4096 bytes is accepted", async () => {
      const filter = `subject == "${"x".repeat(4096 - 13)}"`;
      assert.equal(Buffer.byteLength(filter), 4096);
      await s.broker.subscribe("t", "long", { filter });
      assert.equal((await s.broker.listSubscriptions()).find((x) => x.name === "long")?.filter, filter);
    });

    it("11.2 routes on subject parts and properties (the seed's example)", async () => {
      const got = await routed('subject_parts[0] == "orders" && properties["tier"] == "gold"', [
        { body: "yes", subject: "orders.eu.created", properties: { tier: "gold" } },
        { body: "silver", subject: "orders.eu.created", properties: { tier: "silver" } },
        { body: "refund", subject: "refunds.eu", properties: { tier: "gold" } },
        { body: "none", subject: "orders" },
      ]);
      assert.deepEqual(got, ["yes"]);
    });

    it("11.2 property presence, missing keys and property_keys", async () => {
      await s.broker.subscribe("t", "has", {
        filter: '"priority" in properties && properties["priority"] == "high"',
      });
      await s.broker.subscribe("t", "missing", { filter: 'properties["nope"] == ""' });
      await s.broker.subscribe("t", "two", { filter: "len(property_keys) == 2" });
      await s.broker.subscribe("t", "not", { filter: '!("x" in properties)' });
      await s.broker.send("t", [
        { body: "high", properties: { priority: "high", a: "1" } },
        { body: "low", properties: { priority: "low" } },
        { body: "bare" },
        { body: "x", properties: { x: "" } },
      ]);
      assert.deepEqual(bodies(await s.broker.peek("has")), ["high"]);
      assert.deepEqual(bodies(await s.broker.peek("missing")), ["high", "low", "bare", "x"]);
      assert.deepEqual(bodies(await s.broker.peek("two")), ["high"]);
      assert.deepEqual(bodies(await s.broker.peek("not")), ["high", "low", "bare"]);
    });

    it("11.2 string operators and the message's identifiers", async () => {
      const got = await routed(
        'subject startsWith "payment." and not (properties["test"] == "true") && group_id == "g" && message_id endsWith "-1" && correlation_id != "c2"',
        [
          { body: "yes", subject: "payment.eu", groupId: "g", messageId: "m-1", correlationId: "c1" },
          {
            body: "test",
            subject: "payment.eu",
            groupId: "g",
            messageId: "m-1",
            properties: { test: "true" },
          },
          { body: "corr", subject: "payment.eu", groupId: "g", messageId: "m-1", correlationId: "c2" },
          { body: "id", subject: "payment.eu", groupId: "g", messageId: "m-2" },
          { body: "subject", subject: "payments", groupId: "g", messageId: "m-1" },
        ],
      );
      assert.deepEqual(got, ["yes"]);
    });

    it("11.2 regular expressions", async () => {
      const got = await routed('subject matches "^orders\\\\.(eu|us)$"', [
        { body: "eu", subject: "orders.eu" },
        { body: "asia", subject: "orders.asia" },
        { body: "us", subject: "orders.us" },
      ]);
      assert.deepEqual(got, ["eu", "us"]);
    });

    it("11.2 body_size, body_text and body_json (JSON content only)", async () => {
      await s.broker.subscribe("t", "small", { filter: "body_size < 4" });
      await s.broker.subscribe("t", "urgent", { filter: 'body_text contains "urgent"' });
      await s.broker.subscribe("t", "big", { filter: '"amount" in body_json && body_json.amount > 100' });
      await s.broker.subscribe("t", "nested", { filter: 'body_json.nested.k == "v"' });
      await s.broker.send("t", [
        { body: "abc" },
        { body: "this is urgent" },
        { body: JSON.stringify({ amount: 150 }), contentType: "application/json" },
        { body: JSON.stringify({ amount: 150 }), contentType: "text/plain" },
        { body: JSON.stringify({ amount: 150 }) },
        {
          body: JSON.stringify({ amount: 50, nested: { k: "v" } }),
          contentType: "Application/JSON; charset=utf-8",
        },
      ]);
      assert.deepEqual(bodies(await s.broker.peek("small")), ["abc"]);
      assert.deepEqual(bodies(await s.broker.peek("urgent")), ["this is urgent"]);
      assert.deepEqual(bodies(await s.broker.peek("big")), ['{"amount":150}', '{"amount":150}']);
      assert.deepEqual(
        (await s.broker.peek("big")).map((m) => m.contentType),
        ["application/json", undefined],
        "a non-JSON content type yields an empty body_json",
      );
      assert.deepEqual(bodies(await s.broker.peek("nested")), ['{"amount":50,"nested":{"k":"v"}}']);
    });

    it("11.2 enqueued_at is the publish time on the broker's clock", async () => {
      s.clock.set(Date.UTC(2026, 0, 5, 10, 30));
      await s.broker.subscribe("t", "hours", {
        filter: "enqueued_at.Hour() >= 9 && enqueued_at.Hour() <= 21",
      });
      await s.broker.send("t", { body: "day" });
      s.clock.set(Date.UTC(2026, 0, 5, 23, 0));
      await s.broker.send("t", { body: "night" });
      assert.deepEqual(bodies(await s.broker.peek("hours")), ["day"]);
    });

    it("11.2 visible_at is the delivery time: equal to enqueued_at for an immediate send", async () => {
      await s.broker.subscribe("t", "delayed", { filter: "visible_at - enqueued_at > days(1)" });
      await s.broker.subscribe("t", "now", { filter: "visible_at == enqueued_at" });
      await s.broker.send("t", { body: "immediate" });
      await s.broker.schedule("t", { body: "soon" }, s.clock.now() + 3_600_000);
      await s.broker.schedule("t", { body: "much later" }, s.clock.now() + 2 * 86_400_000);
      assert.deepEqual(bodies(await s.broker.peek("delayed")), ["much later"]);
      assert.deepEqual(bodies(await s.broker.peek("now")), ["immediate"]);
    });

    it("11.2 duration helpers", async () => {
      const got = await routed(
        'duration("1w") == days(7) && minutes(60) == hours(1) && duration("1d12h") > days(1)',
        [{ body: "x" }],
      );
      assert.deepEqual(got, ["x"]);
    });

    it("11.3 fail-closed: a runtime error routes nowhere, never crashes, never matches", async () => {
      await s.broker.subscribe("t", "parts", { filter: 'subject_parts[5] == "x"' });
      await s.broker.subscribe("t", "amount", { filter: "body_json.amount > 100" });
      const [seq] = await s.broker.send("t", [
        { body: "short", subject: "a.b" },
        { body: JSON.stringify({ other: 1 }) },
      ]);
      assert.ok(seq! > 0, "the publish itself succeeds");
      assert.equal((await s.broker.stats("parts")).total, 0);
      assert.equal((await s.broker.stats("amount")).total, 0);
      assert.deepEqual(
        bodies(await s.broker.peek("all")),
        ["short", '{"other":1}'],
        "other subscriptions get it",
      );
      await s.broker.send("t", { body: JSON.stringify({ amount: 101 }), subject: "0.1.2.3.4.x" });
      assert.equal((await s.broker.stats("parts")).total, 1);
      assert.equal((await s.broker.stats("amount")).total, 1);
    });

    it("11.4 a publish that no filter accepts is seq 0, never a conflict", async () => {
      await s.broker.unsubscribe("t", "all");
      await s.broker.subscribe("t", "f", { filter: 'subject == "x"', config: { dedupWindowMs: 60_000 } });
      await s.broker.send("t", { body: "a", messageId: "k", subject: "x" });
      assert.deepEqual(await s.broker.send("t", { body: "b", messageId: "k", subject: "y" }), [0]);
      assert.deepEqual(await s.broker.send("t", [{ body: "c", subject: "y" }]), [0]);
    });
  });

  describe("§1.9 TestFilter", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.subscribe("t", "sub");
    });
    afterEach(() => s.close());

    it("compiles without a sample: valid, not run", async () => {
      assert.deepEqual(await s.broker.testFilter('subject == "x"'), {
        valid: true,
        ran: false,
        matched: false,
      });
    });

    it("reports a compile error as valid:false with the error, never run", async () => {
      for (const filter of BAD_FILTERS) {
        const r = await s.broker.testFilter(filter, { subject: "x" });
        assert.equal(r.valid, false, filter.slice(0, 40));
        assert.equal(r.ran, false);
        assert.equal(r.matched, false);
        assert.ok(r.error && r.error.length > 0);
      }
    });

    it("runs against a sample as a publish would", async () => {
      assert.deepEqual(await s.broker.testFilter('subject == "x"', { subject: "x" }), {
        valid: true,
        ran: true,
        matched: true,
      });
      assert.deepEqual(await s.broker.testFilter('subject == "x"', { subject: "y" }), {
        valid: true,
        ran: true,
        matched: false,
      });
      assert.deepEqual(await s.broker.testFilter("", { subject: "y" }), {
        valid: true,
        ran: true,
        matched: true,
      });
    });

    it("uses the sample's times, defaulting enqueued_at to now and visible_at to enqueued_at", async () => {
      const t = Date.UTC(2026, 0, 1, 12);
      const late = await s.broker.testFilter("visible_at - enqueued_at > hours(1)", {
        enqueuedAt: t,
        visibleAt: t + 2 * 3_600_000,
      });
      assert.equal(late.matched, true);
      const same = await s.broker.testFilter("visible_at == enqueued_at", { enqueuedAt: t });
      assert.equal(same.matched, true);
      s.clock.set(Date.UTC(2026, 0, 1, 7));
      assert.equal((await s.broker.testFilter("enqueued_at.Hour() == 7", { body: "" })).matched, true);
      assert.equal((await s.broker.testFilter("enqueued_at.Hour() == 7", { enqueuedAt: t })).matched, false);
    });

    it("a runtime error is matched:false with the error", async () => {
      const r = await s.broker.testFilter('subject_parts[5] == "x"', { subject: "a.b" });
      assert.equal(r.valid, true);
      assert.equal(r.ran, true);
      assert.equal(r.matched, false);
      assert.ok(r.error && r.error.length > 0);
    });

    it("stores nothing", async () => {
      const before = await snapshotAll(s.broker);
      await s.broker.testFilter('subject == "x"', { subject: "x", body: "b" });
      await s.broker.testFilter("subject ==", { subject: "x" });
      assert.deepEqual(await snapshotAll(s.broker), before);
    });
  });
});
