import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { type CliOptions, cli, type Served, serveInProcess, TOKEN } from "./harness.js";

/**
 * The original CLI's outputs, which scripts parse, compared byte for byte with what its
 * documentation gives for each command: `ok: k=v` lines, JSON objects with sorted keys, bare
 * arrays of wire messages, Go's `%q` bodies and JSON escaping, and its empty forms.
 */
describe("the original's outputs, byte for byte (--output text and json)", () => {
  const tmp = tempDir("mqlite-cli-orig-");
  const file = tmp.file("mq.db");
  let broker: Broker;
  const run = async (args: string[], o: CliOptions = {}) => {
    const r = await cli(args, { ...o, env: { MQLITE_DB: file, ...o.env } });
    assert.equal(r.code, 0, `mqlite ${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr, "", `mqlite ${args.join(" ")} writes nothing on stderr`);
    return r.stdout;
  };

  before(async () => {
    broker = await openBroker(file, { logger: silentLogger, background: false });
  });
  after(async () => {
    await broker.close();
    tmp.cleanup();
  });

  it("create-queue, subscribe, send: ok lines, and the same pairs as JSON with sorted keys", async () => {
    assert.equal(await run(["create-queue", "jobs", "-lock", "1m"]), "ok: action=create-queue queue=jobs\n");
    assert.equal(
      await run(["create-queue", "-output", "json", "spare"]),
      '{\n  "action": "create-queue",\n  "queue": "spare"\n}\n',
    );
    assert.equal(
      await run(["subscribe", "events", "eu", "--expr", 'properties["region"] == "eu"']),
      "ok: action=subscribe subscription=eu topic=events\n",
    );
    // A publish no subscription takes answers seq 0.
    assert.equal(await run(["send", "events", "nobody", "--prop", "region=us"]), "ok: queue=events seq=0\n");
    assert.equal(
      await run(["create-subscription", "events", "all", "-output=json"]),
      '{\n  "action": "subscribe",\n  "subscription": "all",\n  "topic": "events"\n}\n',
    );
    const first = await run(["send", "jobs", "hello", "world", "-message-id", "m1", "-group=g1"]);
    const seq = Number(/^ok: queue=jobs seq=(\d+)\n$/.exec(first)?.[1]);
    assert.ok(seq > 0, first);
    const [stored] = await broker.peek("jobs");
    assert.deepEqual(
      [stored?.seqNumber, stored?.body.toString()],
      [seq, "hello world"],
      "words joined by spaces",
    );
    assert.equal(
      await run(["send", "jobs", "--output", "json", "-subject", "<a&b>", "second"]),
      `{\n  "queue": "jobs",\n  "seq": ${seq + 1}\n}\n`,
    );
    // `--` ends the flags: the rest is the body, and the output stays text.
    assert.equal(
      await run(["send", "jobs", "--", "x", "--output", "json"]),
      `ok: queue=jobs seq=${seq + 2}\n`,
    );
    assert.equal((await broker.peek("jobs", { fromSeq: seq + 2 }))[0]?.body.toString(), "x --output json");
  });

  it("peek: one %q line per message, or (empty); JSON a bare array of wire messages in wire key order", async () => {
    await broker.createQueue("bodies");
    const body = Buffer.concat([
      Buffer.from('a\t"b"\\ é\u00a0\u200b'),
      Buffer.from([0x00, 0x7f, 0xff]),
      Buffer.from("😀\n"),
    ]);
    const [seq] = await broker.send("bodies", {
      body,
      subject: "<a&b>",
      properties: { z: "1", a: "\u2028" },
      messageId: "m",
    });
    assert.equal(
      await run(["peek", "bodies"]),
      `seq=${seq} state=active deliveries=0 body="a\\t\\"b\\"\\\\ é\\u00a0\\u200b\\x00\\x7f\\xff😀\\n"\n`,
    );
    const [m] = await broker.peek("bodies");
    assert.equal(
      await run(["peek", "bodies", "-output", "json", "-max", "5"]),
      [
        "[",
        "  {",
        `    "seq_number": ${seq},`,
        `    "enqueued_at_ms": ${m!.enqueuedAt},`,
        `    "visible_at_ms": ${m!.visibleAt},`,
        `    "state": "active",`,
        `    "message_id": "m",`,
        `    "subject": "\\u003ca\\u0026b\\u003e",`,
        `    "properties": {`,
        `      "a": "\\u2028",`,
        `      "z": "1"`,
        "    },",
        `    "body": "${body.toString("base64")}"`,
        "  }",
        "]",
        "",
      ].join("\n"),
    );
    // An unknown queue is an empty page, not an error, as in the original.
    assert.equal(await run(["peek", "nowhere"]), "(empty)\n");
    assert.equal(await run(["peek", "nowhere", "--output", "json"]), "[]\n");
  });

  it("receive: a line per message (tokens only with --no-ack), (no messages); JSON [ ] on two lines when empty", async () => {
    await broker.createQueue("inbox");
    const [s1, s2] = await broker.send("inbox", [
      { body: "one", messageId: "id1", groupId: "g", replyTo: "back", subject: "never printed" },
      { body: "two" },
    ]);
    const held = await run(["receive", "inbox", "-no-ack"]);
    const token = /lock-token=([0-9a-f]{32}) /.exec(held)?.[1];
    assert.equal(
      held,
      `seq=${s1} deliveries=1 message-id=id1 group=g reply-to=back lock-token=${token} body="one"\n`,
    );
    assert.equal(
      await run(["complete", "inbox", String(s1), token!]),
      `ok: action=complete queue=inbox seq=${s1}\n`,
    );
    const json = await run(["receive", "inbox", "-max", "5", "--output", "json"]);
    const [got] = JSON.parse(json);
    assert.equal(
      json,
      [
        "[",
        "  {",
        `    "seq_number": ${s2},`,
        `    "enqueued_at_ms": ${got.enqueued_at_ms},`,
        `    "locked_until_ms": ${got.locked_until_ms},`,
        `    "delivery_count": 1,`,
        `    "body": "${Buffer.from("two").toString("base64")}"`,
        "  }",
        "]",
        "",
      ].join("\n"),
      "auto-ack: no lock token",
    );
    assert.equal((await broker.stats("inbox")).total, 0, "completed once printed");
    assert.equal(await run(["receive", "inbox"]), "(no messages)\n");
    assert.equal(await run(["receive", "inbox", "--output", "json"]), "[\n]\n");
    const [s3] = await broker.send("inbox", { body: "three" });
    assert.equal(await run(["receive", "inbox", "--delete"]), `seq=${s3} deliveries=1 body="three"\n`);
  });

  it("settle verbs, cancel, schedule and receive-deferred answer as the original", async () => {
    await broker.createQueue("settle");
    const seqs = await broker.send("settle", [{ body: "a" }, { body: "b" }, { body: "c" }, { body: "d" }]);
    const ms = await broker.receive("settle", { maxMessages: 4 });
    const [a, b, c, d] = ms.map((m) => [m.seqNumber, m.lockToken!] as const);
    assert.equal(
      await run(["renew", "settle", String(a![0]), a![1], "--output", "json"]),
      `{\n  "action": "renew",\n  "queue": "settle",\n  "seq": ${a![0]}\n}\n`,
    );
    assert.equal(
      await run(["abandon", "settle", String(a![0]), a![1], "-delay", "1h"]),
      `ok: action=abandon queue=settle seq=${a![0]}\n`,
    );
    assert.equal(
      await run(["reject", "settle", String(b![0]), b![1], "-reason", "Bad", "-detail", "why"]),
      `ok: action=reject queue=settle seq=${b![0]}\n`,
    );
    assert.equal(
      await run(["defer", "settle", String(c![0]), c![1]]),
      `ok: action=defer queue=settle seq=${c![0]}\n`,
    );
    assert.equal(
      await run(["complete", "settle", String(d![0]), d![1], "-output", "json"]),
      `{\n  "action": "complete",\n  "queue": "settle",\n  "seq": ${d![0]}\n}\n`,
    );
    const deferred = await run(["receive-deferred", "settle", "-seq", ` ${c![0]}, `]);
    assert.match(deferred, new RegExp(`^seq=${c![0]} deliveries=2 lock-token=[0-9a-f]{32} body="c"\\n$`));
    assert.equal(await run(["receive-deferred", "settle", "--seq", "999999", "--output", "json"]), "[\n]\n");

    const scheduled = await run(["schedule", "settle", "later", "-at", "2099-01-02T03:04:05.5Z"]);
    const seq = Number(/^ok: queue=settle seq=(\d+) at=2099-01-02T03:04:05\.5Z\n$/.exec(scheduled)?.[1]);
    assert.ok(seq > Math.max(...seqs), scheduled);
    assert.equal(
      await run(["schedule", "settle", "x", "--at", "2099-01-02T03:04:05Z", "--output", "json"]),
      `{\n  "at": "2099-01-02T03:04:05Z",\n  "queue": "settle",\n  "seq": ${seq + 1}\n}\n`,
    );
    assert.equal(await run(["cancel", "settle", String(seq)]), `ok: action=cancel queue=settle seq=${seq}\n`);
    assert.equal(
      await run(["cancel", "settle", String(seq + 1), "-output", "json"]),
      `{\n  "action": "cancel",\n  "queue": "settle",\n  "seq": ${seq + 1}\n}\n`,
    );
  });

  it("metrics, redrive and purge-dlq", async () => {
    assert.match(
      await run(["metrics", "settle"]),
      /^queue=settle active=0 locked=1 deferred=0 scheduled=1 dead=1 total=3 oldest=\d+ms\n$/,
    );
    const metrics = JSON.parse(await run(["metrics", "settle", "--output", "json"]));
    assert.deepEqual(Object.keys(metrics), [
      "queue",
      "active",
      "locked",
      "deferred",
      "scheduled",
      "dead_lettered",
      "total",
      "oldest_message_age_ms",
    ]);
    assert.deepEqual([metrics.locked, metrics.scheduled, metrics.dead_lettered], [1, 1, 1]);
    assert.equal(await run(["redrive", "settle", "-to", "spare"]), "ok: action=redrive moved=1\n");
    assert.equal(
      await run(["purge-dlq", "settle", "--all", "--output", "json"]),
      '{\n  "action": "purge-dlq",\n  "purged": 0\n}\n',
    );
    assert.equal(await run(["purge-dlq", "settle", "-max", "0x10"]), "ok: action=purge-dlq purged=0\n");
  });

  it("list and list-subscriptions: padded columns, bare arrays", async () => {
    const queues = await broker.listQueues();
    const line = (q: (typeof queues)[number]) =>
      `${q.name.padEnd(24)} kind=${q.kind.padEnd(12)} lock=${q.lockDurationMs}ms maxdc=${q.maxDeliveryCount} ttl=${q.defaultTtlMs}ms dedup=${q.dedupWindowMs}ms\n`;
    assert.equal(await run(["list"]), queues.map(line).join(""));
    assert.match(await run(["list"]), /^jobs {21}kind=queue {8}lock=60000ms maxdc=10 ttl=0ms dedup=0ms$/m);
    const listed = await run(["list", "--output", "json"]);
    assert.equal(
      listed,
      `${JSON.stringify(
        queues.map((q) => ({
          name: q.name,
          kind: q.kind,
          lock_duration_ms: q.lockDurationMs,
          max_delivery_count: q.maxDeliveryCount,
          default_ttl_ms: q.defaultTtlMs,
          dedup_window_ms: q.dedupWindowMs,
        })),
        null,
        2,
      )}\n`,
    );
    assert.equal(
      await run(["list-subscriptions"]),
      `${"all".padEnd(20)} topic=${"events".padEnd(20)} filter=(match all)\n` +
        `${"eu".padEnd(20)} topic=${"events".padEnd(20)} filter=properties["region"] == "eu"\n`,
    );
    assert.equal(
      await run(["list-subscriptions", "--output", "json"]),
      '[\n  {\n    "topic": "events",\n    "name": "all"\n  },\n  {\n    "topic": "events",\n    "name": "eu",\n    "expr": "properties[\\"region\\"] == \\"eu\\""\n  }\n]\n',
    );
    const empty = tmp.file("empty.db");
    assert.equal(await run(["list"], { env: { MQLITE_DB: empty } }), "(no queues)\n");
    assert.equal(await run(["list", "-output", "json"], { env: { MQLITE_DB: empty } }), "[]\n");
    assert.equal(await run(["list-subscriptions"], { env: { MQLITE_DB: empty } }), "(no subscriptions)\n");
    assert.equal(await run(["list-subscriptions", "-output", "json"], { env: { MQLITE_DB: empty } }), "[]\n");
  });

  it("test-filter: a positional sample body; the three verdicts; an invalid filter exits 1 after the JSON", async () => {
    assert.equal(await run(["test-filter", "true"]), "ok: expression is valid (no sample given)\n");
    assert.equal(
      await run(["test-filter", 'subject == "a.b"', "--subject", "a.b"]),
      "ok: valid; sample MATCHED\n",
    );
    assert.equal(
      await run(["test-filter", 'body_text == "hello world"', "hello", "world"]),
      "ok: valid; sample MATCHED\n",
    );
    assert.equal(
      await run(["test-filter", 'body_text == "x"', "-", "--output", "json"], { input: "y" }),
      '{\n  "valid": true,\n  "ran": true,\n  "matched": false\n}\n',
    );
    assert.equal(await run(["test-filter", 'body_text == "x"', "y"]), "ok: valid; sample did NOT match\n");
    const [text, json] = await Promise.all([
      cli(["test-filter", "subject =="], { env: { MQLITE_DB: file } }),
      cli(["test-filter", "subject ==", "-output", "json"], { env: { MQLITE_DB: file } }),
    ]);
    assert.equal(text.code, 1);
    assert.equal(text.stdout, "", "text mode prints only the error");
    assert.match(text.stderr, /^error: invalid_argument: invalid filter: /);
    assert.equal(json.code, 1);
    const verdict = JSON.parse(json.stdout);
    assert.deepEqual(Object.keys(verdict), ["valid", "error", "ran", "matched"]);
    assert.equal(verdict.valid, false);
    assert.match(json.stderr, /^error: invalid_argument: invalid filter: /);
  });

  it("status: the original's block, values at column 16 (no version, uptime or auth for a local file)", async () => {
    const text = await run(["status"]);
    const s = await broker.status();
    assert.match(
      text,
      new RegExp(
        `^backend: {7}local file\\nlocation: {6}${s.location.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\nschema: {8}${s.schemaVersion}\\nping: {10}\\d+ ms\\nsize: {10}\\d+ bytes\\nqueues: {8}${s.queues}\\nsubscriptions: ${s.subscriptions}\\n$`,
      ),
    );
    const json = JSON.parse(await run(["status", "--output", "json"]));
    assert.deepEqual(Object.keys(json), [
      "backend",
      "remote",
      "location",
      "schema_version",
      "ping_ms",
      "db_size_bytes",
      "queues",
      "subscriptions",
      "uptime_ms",
      "auth",
    ]);
    assert.ok(Number.isInteger(json.ping_ms));
  });

  describe("against a served broker", () => {
    let served: Served;
    before(async () => {
      served = await serveInProcess();
    });
    after(() => served.close());

    it("status adds version, uptime and auth; an mqlite://token@host DSN reaches it", async () => {
      const port = new URL(served.url).port;
      const r = await cli(["status", "-endpoint", `mqlite://${TOKEN}@127.0.0.1:${port}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /^version: {7}\d+\.\d+\.\d+\S*\nbackend: {7}memory\nlocation: {6}:memory:\nschema: {8}\S+\nping: {10}\d+ ms\nsize: {10}\d+ bytes\nqueues: {8}0\nsubscriptions: 0\nuptime: {8}(\d+h)?(\d+m)?\d+s\nauth: {10}true\n$/,
      );
    });
  });
});
