import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { statsToWire } from "../../src/wire/results.js";
import { tempDir } from "../support/temp.js";
import { type CliOptions, cli, eventually, ok, okJson } from "./harness.js";

/** How one mode reaches its broker: the environment every command runs with. */
export interface Mode {
  name: string;
  start(): Promise<{
    env: Record<string, string>;
    /** The same broker, read in this process to check what the commands did. */
    broker: Broker;
    stop(): Promise<void>;
  }>;
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");

/**
 * Every data and admin command, run as a child process in one mode, in our own output formats:
 * `--output human` (tables and sentences for people) and `--output wire` (the HTTP API's JSON);
 * the broker's state is checked after each step. The original's `text` and `json` outputs are
 * compared byte for byte in original-output.test.ts.
 */
export function commandScenario(mode: Mode): void {
  describe(`mqlite commands (${mode.name})`, () => {
    let env: Record<string, string>;
    let broker: Broker;
    let stop: () => Promise<void>;
    const tmp = tempDir("mqlite-cli-");
    const run = (args: string[], o: CliOptions = {}) =>
      ok([...args, "--output", "human"], { ...o, env: { ...env, ...o.env } });
    const json = (args: string[], o: CliOptions = {}) =>
      okJson(args, { ...o, env: { ...env, ...o.env } }, "wire");
    const fail = (args: string[], o: CliOptions = {}) =>
      cli([...args, "--output", "human"], { ...o, env: { ...env, ...o.env } });
    // State is checked in this process (a child per check would only slow the suite down).
    const stats = async (queue: string) => statsToWire(await broker.stats(queue));

    before(async () => {
      ({ env, broker, stop } = await mode.start());
    });
    after(async () => {
      await stop();
      tmp.cleanup();
    });

    it("create-queue takes every config flag; list shows it as a table and as wire JSON", async () => {
      const created = await run([
        "create-queue",
        "orders",
        "--lock",
        "1m",
        "--max-delivery",
        "3",
        "--ttl",
        "1h30m",
        "--dedup",
        "10m",
        "--ordering",
        "standard",
        "--dlq-max-age",
        "72h",
        "--dlq-max-count",
        "-1",
        "--dlq-max-bytes",
        "4096",
      ]);
      assert.equal(created, "created queue orders\n");
      const [text, listed] = await Promise.all([run(["list"]), json(["list"])]);
      assert.match(text, /^NAME\s+KIND\s+ORDERING\s+LOCK/);
      assert.match(text, /^orders\s+queue\s+standard\s+1m\s+3\s+1h30m\s+10m\s+3d\s+none$/m);
      const q = listed.queues.find((x: { name: string }) => x.name === "orders");
      assert.deepEqual(
        [q.lock_duration_ms, q.max_delivery_count, q.default_ttl_ms, q.dedup_window_ms, q.ordering_mode],
        [60_000, 3, 5_400_000, 600_000, "standard"],
      );
      assert.deepEqual([q.dlq_max_age_ms, q.dlq_max_count, q.dlq_max_bytes], [259_200_000, -1, 4096]);
    });

    it("send: a body argument with metadata, stdin (-), a file; text and JSON output", async () => {
      const binary = tmp.file("body.bin");
      writeFileSync(binary, Buffer.from([0, 1, 2, 255]));
      const [first, fromStdin, fromFile] = await Promise.all([
        run([
          "send",
          "orders",
          "hello",
          "--subject",
          "orders.eu",
          "--group",
          "g1",
          "--message-id",
          "m1",
          "--prop",
          "region=eu,tier=1",
          "--content-type",
          "text/plain",
        ]),
        json(["send", "orders", "-"], { input: "from stdin\n" }),
        json(["send", "orders", "--file", binary, "--ttl", "5m"]),
      ]);
      assert.match(first, /^sent: seq \d+\n$/);
      assert.equal(fromStdin.seq_numbers.length, 1);
      assert.equal(fromFile.seq_numbers.length, 1);
      const peeked = await json(["peek", "orders"]);
      const bodies = peeked.map((m: { body: string }) => Buffer.from(m.body, "base64").toString("latin1"));
      assert.ok(bodies.includes("hello"));
      assert.ok(bodies.includes("from stdin\n"), "stdin is taken byte for byte");
      assert.ok(bodies.includes("\u0000\u0001\u0002\u00ff"), "a file is taken byte for byte");
      const hello = peeked.find((m: { message_id?: string }) => m.message_id === "m1");
      assert.deepEqual(
        [hello.subject, hello.group_id, hello.content_type, hello.properties],
        ["orders.eu", "g1", "text/plain", { region: "eu", tier: "1" }],
      );
    });

    it("bulk send: NDJSON from stdin (wire-shaped lines) and raw lines from a file", async () => {
      const ndjson = [
        JSON.stringify({ body: b64("n1"), subject: "bulk.a", properties: { k: "v" } }),
        "",
        JSON.stringify({ body: b64("n2"), message_id: "n2" }),
        JSON.stringify({ body: b64("n3"), group_id: "g2" }),
      ].join("\n");
      const lines = tmp.file("lines.txt");
      writeFileSync(lines, Array.from({ length: 300 }, (_, i) => `line ${i}`).join("\r\n"));
      const [nd, raw] = await Promise.all([
        json(["send", "orders", "-", "--ndjson"], { input: `${ndjson}\n` }),
        run(["send", "orders", "--file", lines, "--lines", "--subject", "bulk.lines"]),
      ]);
      assert.equal(nd.seq_numbers.length, 3);
      assert.ok(nd.seq_numbers.every((s: number) => s > 0));
      assert.equal(raw, "sent 300 messages\n");
      const s = await stats("orders");
      assert.equal(s.active, 306);
      assert.equal(s.total, 306);
      const bulk = await json(["peek", "orders", "--from", String(nd.seq_numbers[0]), "--max", "3"]);
      assert.deepEqual(
        bulk.map((m: { body: string; subject?: string }) => [
          Buffer.from(m.body, "base64").toString(),
          m.subject,
        ]),
        [
          ["n1", "bulk.a"],
          ["n2", undefined],
          ["n3", undefined],
        ],
      );
    });

    it("peek prints an aligned table for people and a bare array for scripts", async () => {
      const [text, arr] = await Promise.all([
        run(["peek", "orders", "--max", "3"]),
        json(["peek", "orders", "--state", "active", "--max", "1000"]),
      ]);
      const rows = text.trimEnd().split("\n");
      assert.match(rows[0]!, /^\s*SEQ\s+STATE\s+DELIVERIES\s+ENQUEUED_AT\s+.*BODY$/);
      assert.equal(rows.length, 4);
      assert.ok(rows.slice(1).every((r) => /^\s*\d+\s+active\s+0\s+\S+/.test(r)));
      // Text as is, text with control characters quoted, anything else in base64: nothing is garbled.
      assert.ok(rows.some((r) => /\sorders\.eu\s.*\shello$/.test(r)));
      assert.ok(rows.some((r) => r.endsWith(' "from stdin\\n"')));
      assert.ok(rows.some((r) => r.endsWith(" base64:AAEC/w==")));
      assert.ok(Array.isArray(arr), "a bare array, not {messages}");
      assert.equal(arr.length, 306);
      assert.ok(
        arr.every((m: { state: string; lock_token?: string }) => m.state === "active" && !m.lock_token),
      );
    });

    it("metrics: one line for people, MetricsResponse for scripts", async () => {
      const [text, wire] = await Promise.all([run(["metrics", "orders"]), json(["metrics", "orders"])]);
      assert.match(
        text,
        /^orders: active 306, locked 0, deferred 0, scheduled 0, dead-lettered 0, total 306/,
      );
      const steady = (s: { oldest_message_age_ms: number }) => ({ ...s, oldest_message_age_ms: 0 });
      assert.deepEqual(steady(wire), steady(await stats("orders")));
    });

    let work: number[];
    // Numbers are right-aligned: past 999 (a process that did not give back its block leaves a gap)
    // the header is indented too.
    it("receive completes what it printed (CompleteBatch), as a bare JSON array or a table", async () => {
      await run(["create-queue", "work", "--max-delivery", "5"]);
      work = (await json(["send", "work", "-", "--lines"], { input: "a\nb\nc\nd\ne\nf\ng\n" })).seq_numbers;
      assert.equal(work.length, 7);
      const got = await json(["receive", "work"]);
      assert.ok(Array.isArray(got), "a bare array, not {messages}");
      assert.equal(got.length, 1);
      assert.equal(Buffer.from(got[0].body, "base64").toString(), "a");
      assert.equal(got[0].delivery_count, 1);
      const text = await run(["receive", "work", "--max", "1"]);
      assert.match(text, /^\s*SEQ\s+DELIVERIES\s+ENQUEUED_AT\s+BODY\n\s*\d+\s+1\s+\S+\s+b\n$/);
      const s = await stats("work");
      assert.deepEqual([s.active, s.locked, s.total], [5, 0, 5], "both were completed");
    });

    it("receive --no-ack keeps the locks; abandon, renew, defer, reject, complete settle them; lock_lost fails", async () => {
      const held = await json(["receive", "work", "--no-ack", "--max", "3"]);
      assert.deepEqual(
        held.map((m: { body: string }) => Buffer.from(m.body, "base64").toString()),
        ["c", "d", "e"],
      );
      assert.ok(held.every((m: { lock_token?: string }) => /^[0-9a-f]{32}$/.test(m.lock_token ?? "")));
      const [c, d, e] = held as { seq_number: number; lock_token: string }[];
      assert.equal((await stats("work")).locked, 3);
      const [abandoned, renewedDeferred, rejected] = await Promise.all([
        run(["abandon", "work", String(c!.seq_number), c!.lock_token, "--delay", "1h"]),
        run(["renew", "work", String(d!.seq_number), d!.lock_token]).then(async (renewed) => [
          renewed,
          await run(["defer", "work", String(d!.seq_number), d!.lock_token]),
        ]),
        run(["reject", "work", String(e!.seq_number), e!.lock_token, "--reason", "Bad", "--detail", "why"]),
      ]);
      assert.equal(abandoned, `abandoned seq ${c!.seq_number}\n`);
      assert.deepEqual(renewedDeferred, [
        `renewed the lock of seq ${d!.seq_number}\n`,
        `deferred seq ${d!.seq_number}\n`,
      ]);
      assert.equal(rejected, `dead-lettered seq ${e!.seq_number}\n`);

      const [lost, deferred, dead, parked] = await Promise.all([
        fail(["complete", "work", String(c!.seq_number), c!.lock_token]),
        json(["receive-deferred", "work", "--seq", String(d!.seq_number)]),
        json(["peek", "work", "--state", "dead_lettered"]),
        json(["peek", "work", "--state", "scheduled"]),
      ]);
      assert.equal(lost.code, 1);
      assert.match(lost.stderr, /^error: lock_lost: /);
      assert.equal(deferred.length, 1);
      assert.equal(deferred[0].delivery_count, 2);
      assert.deepEqual(
        [dead[0].seq_number, dead[0].dead_letter_reason, dead[0].dead_letter_description],
        [e!.seq_number, "Bad", "why"],
      );
      assert.deepEqual(
        parked.map((m: { seq_number: number }) => m.seq_number),
        [c!.seq_number],
        "a delayed abandon parks the message",
      );
      const completed = await json(["complete", "work", String(d!.seq_number), deferred[0].lock_token]);
      assert.deepEqual(completed, { ok: true });
    });

    it("receive --delete takes messages without a lock; an empty receive prints nothing to settle", async () => {
      const taken = await json(["receive", "work", "--delete"]);
      assert.equal(taken.length, 1);
      assert.equal(Buffer.from(taken[0].body, "base64").toString(), "f");
      assert.equal(taken[0].lock_token, undefined);
      await run(["create-queue", "empty"]);
      const [text, arr] = await Promise.all([run(["receive", "empty"]), json(["receive", "empty"])]);
      assert.equal(text, "no messages\n");
      assert.deepEqual(arr, []);
      const s = await stats("work");
      assert.deepEqual(
        [s.active, s.scheduled, s.dead_lettered],
        [1, 1, 1],
        "g waits, c is parked, e is dead",
      );
    });

    it("schedule (--at a duration or RFC 3339) and cancel", async () => {
      const [later, far] = await Promise.all([
        run(["schedule", "work", "later", "--at", "1h"]),
        json(["schedule", "work", "-", "--at", "2099-01-01T00:00:00Z", "--subject", "far"], { input: "x" }),
      ]);
      const seq = Number(/^scheduled: seq (\d+) at \d{4}-/.exec(later)?.[1]);
      assert.ok(seq > 0, later);
      const scheduled = await json(["peek", "work", "--state", "scheduled"]);
      const farMsg = scheduled.find((m: { seq_number: number }) => m.seq_number === far.seq_numbers[0]);
      assert.equal(farMsg.visible_at_ms, Date.parse("2099-01-01T00:00:00Z"));
      assert.equal(await run(["cancel", "work", String(seq)]), `cancelled seq ${seq}\n`);
      const again = await fail(["cancel", "work", String(seq)]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /^error: not_found: /);
    });

    it("topics: subscribe (and create-subscription), list-subscriptions, test-filter, publish, unsubscribe", async () => {
      await Promise.all([
        run(["subscribe", "events", "eu", "--expr", 'properties["region"] == "eu"']),
        run(["create-subscription", "events", "all"]),
      ]);
      const [subs, text, matched, invalid] = await Promise.all([
        json(["list-subscriptions"]),
        run(["list-subscriptions"]),
        json(["test-filter", 'properties["region"] == "eu"', "--prop", "region=eu", "--subject", "a.b"]),
        fail(["test-filter", "subject =="]),
      ]);
      assert.deepEqual(
        subs.subscriptions.map((s: { topic: string; name: string; expr?: string }) => [
          s.topic,
          s.name,
          s.expr,
        ]),
        [
          ["events", "all", undefined],
          ["events", "eu", 'properties["region"] == "eu"'],
        ],
      );
      assert.match(text, /^TOPIC\s+NAME\s+KIND\s+PAUSED\s+FILTER\nevents\s+all\s+queue\s+\(all messages\)/);
      assert.deepEqual(matched, { valid: true, ran: true, matched: true });
      assert.equal(invalid.code, 1);
      assert.match(invalid.stdout, /^invalid: /);
      const sent = await json(["send", "events", "hi", "--prop", "region=us"]);
      assert.ok(sent.seq_numbers[0] > 0);
      const [eu, all] = await Promise.all([stats("eu"), stats("all")]);
      assert.deepEqual([eu.total, all.total], [0, 1], "the filter routed the copy");
      assert.equal(await run(["unsubscribe", "events", "all"]), "unsubscribed all from events\n");
      await assert.rejects(broker.stats("all"), { code: "not_found" });
    });

    it("dead letters: purge-dlq needs a bound or --all; redrive in place or to another queue", async () => {
      await run(["create-queue", "dlq", "--lock", "1ms", "--max-delivery", "1"]);
      await run(["send", "dlq", "-", "--lines"], { input: "1\n2\n3\n4\n" });
      assert.equal((await json(["receive", "dlq", "--no-ack", "--max", "4"])).length, 4);
      // The locks lapse at once and the delivery limit is 1: the reaper dead-letters all four.
      await eventually(async () => assert.equal((await stats("dlq")).dead_lettered, 4));
      const unbounded = await fail(["purge-dlq", "dlq"]);
      assert.equal(unbounded.code, 1);
      assert.match(
        unbounded.stderr,
        /^error: invalid_argument: refusing to purge the entire DLQ without a bound/,
      );
      assert.equal(await run(["purge-dlq", "dlq", "--max", "1"]), "purged 1 dead letter\n");
      assert.equal(await run(["redrive", "dlq", "--to", "orders", "--max", "1"]), "moved 1 dead letter\n");
      assert.deepEqual(await json(["redrive", "dlq", "--max", "1", "--older-than", "1ms"]), { moved: 1 });
      assert.deepEqual(await json(["purge-dlq", "dlq", "--all"]), { purged: 1 });
      assert.deepEqual(await json(["redrive", "work"]), { moved: 1 });
      const [dlq, work] = await Promise.all([stats("dlq"), stats("work")]);
      assert.equal(dlq.dead_lettered, 0);
      assert.equal(work.dead_lettered, 0);
    });

    it("status, version and help", async () => {
      const [text, status, version, versionJson, help] = await Promise.all([
        run(["status"]),
        json(["status"]),
        run(["version"]),
        json(["version"]),
        ok(["help", "send"], { env }),
      ]);
      assert.match(text, /^version\s+\d+\.\d+\.\d+/m);
      assert.match(text, /^queues\s+\d+$/m);
      assert.equal(typeof status.schema_version, "string");
      assert.ok(status.queues >= 4);
      assert.equal(status.subscriptions, 1);
      assert.match(version, /^mqlite \d+\.\d+\.\d+\n$/);
      assert.equal(`mqlite ${versionJson.version}\n`, version);
      assert.match(help, /Usage: mqlite send \[options\] <queue> \[body\.\.\.\]/);
      assert.match(help, /--ndjson/);
    });

    it("delete-queue removes the queue and its messages", async () => {
      assert.equal(await run(["delete-queue", "orders"]), "deleted queue orders\n");
      const gone = await fail(["metrics", "orders"]);
      assert.equal(gone.code, 1);
      assert.equal(gone.stderr, "error: not_found: mqlite: queue not found\n");
    });
  });
}
