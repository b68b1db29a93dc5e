import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Broker } from "../../src/contract/broker.js";

/** How a suite reaches the MCP server: a connected client, and the broker behind it to check. */
export interface McpSetup {
  start(): Promise<{ client: Client; broker: Broker; stop(): Promise<void> }>;
}

export const TOOL_NAMES = [
  "list_queues",
  "create_queue",
  "send",
  "receive",
  "complete",
  "abandon",
  "renew",
  "defer",
  "receive_deferred",
  "reject",
  "peek",
  "stats",
  "redrive",
  "purge",
  "schedule",
  "cancel",
  "subscribe",
  "list_subscriptions",
  "test_filter",
];

/** Every tool through the SDK's own client: results are JSON text, failures `isError` with a code. */
export function toolScenario(name: string, setup: McpSetup): void {
  describe(`MCP tools (${name})`, () => {
    let client: Client;
    let broker: Broker;
    let stop: () => Promise<void>;
    before(async () => {
      ({ client, broker, stop } = await setup.start());
    });
    after(() => stop());

    /** Calls a tool that must succeed and parses its JSON. */
    async function call(tool: string, args: Record<string, unknown> = {}): Promise<any> {
      const r = (await client.callTool({ name: tool, arguments: args })) as {
        isError?: boolean;
        content: { type: string; text: string }[];
      };
      assert.notEqual(r.isError, true, `${tool}: ${r.content[0]?.text}`);
      return JSON.parse(r.content[0]!.text);
    }
    /** Calls a tool that must fail; answers its text. */
    async function failing(tool: string, args: Record<string, unknown>): Promise<string> {
      const r = (await client.callTool({ name: tool, arguments: args })) as {
        isError?: boolean;
        content: { type: string; text: string }[];
      };
      assert.equal(r.isError, true, `${tool} should fail`);
      return r.content[0]!.text;
    }

    it("lists every tool with a description and a JSON schema", async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        TOOL_NAMES,
      );
      for (const t of tools) {
        assert.ok((t.description ?? "").length > 60, `${t.name} says what it does`);
        assert.equal(t.inputSchema.type, "object");
      }
      const receive = tools.find((t) => t.name === "receive")!;
      assert.deepEqual(Object.keys(receive.inputSchema.properties ?? {}), [
        "queue",
        "max_messages",
        "wait_time_ms",
      ]);
      assert.deepEqual(receive.inputSchema.required, ["queue"]);
    });

    it("create_queue with its config, send (text and binary), peek, receive, complete, stats", async () => {
      assert.deepEqual(await call("create_queue", { name: "jobs", config: { max_delivery_count: 2 } }), {
        ok: true,
      });
      const listed = await call("list_queues");
      assert.equal(listed.queues.find((q: { name: string }) => q.name === "jobs").max_delivery_count, 2);
      const text = await call("send", {
        queue: "jobs",
        body: "héllo",
        subject: "a.b",
        properties: { k: "v" },
      });
      const binary = await call("send", { queue: "jobs", body: "AP8=", body_encoding: "base64" });
      assert.equal(text.seq_numbers.length, 1);
      const peeked = (await call("peek", { queue: "jobs" })).messages;
      assert.deepEqual(
        peeked.map((m: { body: string; body_encoding?: string; state: string }) => [
          m.body,
          m.body_encoding,
          m.state,
        ]),
        [
          ["héllo", undefined, "active"],
          ["AP8=", "base64", "active"],
        ],
      );
      assert.deepEqual([peeked[0].subject, peeked[0].properties], ["a.b", { k: "v" }]);
      const got = (await call("receive", { queue: "jobs", max_messages: 5 })).messages;
      assert.deepEqual(
        got.map((m: { seq_number: number }) => m.seq_number),
        [text.seq_numbers[0], binary.seq_numbers[0]],
      );
      assert.ok(got.every((m: { lock_token: string }) => /^[0-9a-f]{32}$/.test(m.lock_token)));
      assert.deepEqual(
        await call("complete", {
          queue: "jobs",
          seq_number: got[0].seq_number,
          lock_token: got[0].lock_token,
        }),
        { ok: true },
      );
      const stats = await call("stats", { queue: "jobs" });
      assert.deepEqual([stats.active, stats.locked, stats.total], [0, 1, 1]);
      await broker.complete("jobs", got[1].seq_number, got[1].lock_token);
    });

    it("a failing call is isError with the error's code and message", async () => {
      assert.deepEqual(JSON.parse(await failing("send", { queue: "nope", body: "x" })), {
        code: "not_found",
        message: "mqlite: queue not found",
      });
      const lost = JSON.parse(
        await failing("complete", {
          queue: "jobs",
          seq_number: 1,
          lock_token: "0123456789abcdef0123456789abcdef",
        }),
      );
      assert.equal(lost.code, "lock_lost");
      assert.match(
        await failing("receive", { max_messages: 1 }),
        /queue/,
        "arguments are checked by the schema",
      );
      assert.match(
        await failing("schedule", { queue: "jobs", body: "x" }),
        /exactly one of at .* and delay_ms/,
      );
    });

    it("the other settlements: abandon, renew, defer + receive_deferred, reject, then redrive and purge", async () => {
      const [a, b, c] = await broker.send("jobs", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const held = (await call("receive", { queue: "jobs", max_messages: 3 })).messages as {
        seq_number: number;
        lock_token: string;
      }[];
      const ref = (seq: number) => {
        const m = held.find((h) => h.seq_number === seq)!;
        return { queue: "jobs", seq_number: m.seq_number, lock_token: m.lock_token };
      };
      await call("renew", ref(a!));
      await call("abandon", { ...ref(a!), delay_ms: 60_000 });
      await call("defer", ref(b!));
      await call("reject", { ...ref(c!), reason: "Bad", description: "why" });
      const dead = (await call("peek", { queue: "jobs", state: "dead_lettered" })).messages;
      assert.deepEqual(
        [dead[0].seq_number, dead[0].dead_letter_reason, dead[0].dead_letter_description],
        [c, "Bad", "why"],
      );
      const deferred = (await call("receive_deferred", { queue: "jobs", seq_numbers: [b] })).messages;
      assert.equal(deferred[0].body, "b");
      await call("complete", { queue: "jobs", seq_number: b, lock_token: deferred[0].lock_token });
      assert.deepEqual(await call("redrive", { queue: "jobs" }), { moved: 1 });
      const [again] = await broker.receive("jobs");
      await broker.reject("jobs", again!.seqNumber, again!.lockToken!);
      assert.deepEqual(await call("purge", { queue: "jobs", max: 5 }), { purged: 1 });
      const s = await broker.stats("jobs");
      assert.deepEqual([s.scheduled, s.deadLettered, s.total], [1, 0, 1], "only the parked abandon is left");
    });

    it("schedule and cancel; subscribe, list_subscriptions, test_filter, and a publish", async () => {
      const later = await call("schedule", { queue: "jobs", body: "later", delay_ms: 3_600_000 });
      assert.ok(later.scheduled_enqueue_time_ms > Date.now());
      assert.deepEqual(await call("cancel", { queue: "jobs", seq_number: later.seq_numbers[0] }), {
        ok: true,
      });
      const at = await call("schedule", { queue: "jobs", body: "far", at: "2099-01-01T00:00:00Z" });
      assert.equal(at.scheduled_enqueue_time_ms, Date.parse("2099-01-01T00:00:00Z"));

      assert.deepEqual(
        await call("subscribe", { topic: "events", name: "big", expr: "body_json.amount > 100" }),
        {
          ok: true,
        },
      );
      const subs = await call("list_subscriptions");
      assert.deepEqual(subs.subscriptions[0], {
        topic: "events",
        name: "big",
        expr: "body_json.amount > 100",
        kind: "queue",
        paused: false,
        created_at_ms: subs.subscriptions[0].created_at_ms,
      });
      assert.deepEqual(
        await call("test_filter", { expr: "body_json.amount > 100", message: { body: '{"amount":250}' } }),
        { valid: true, ran: true, matched: true },
      );
      const invalid = await call("test_filter", { expr: "nope ==" });
      assert.deepEqual([invalid.valid, invalid.ran], [false, false]);
      const [small, big] = [
        await call("send", { queue: "events", body: '{"amount":5}' }),
        await call("send", { queue: "events", body: '{"amount":500}' }),
      ];
      assert.equal(small.seq_numbers[0], 0, "filtered out: no subscription accepted it");
      assert.ok(big.seq_numbers[0] > 0);
      assert.equal((await broker.stats("big")).active, 1);
    });
  });
}
