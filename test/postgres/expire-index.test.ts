// On PostgreSQL the TTL index holds live messages only (migration 7): a kept completion is indexed
// for its retention by `idx_msg_retained` alone, and the TTL sweep still reads `idx_msg_expire`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type pg from "pg";
import type { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { brokerWithAdmin, requirePostgres } from "./pg.js";

await requirePostgres();

interface PlanNode {
  "Index Name"?: string;
  Plans?: PlanNode[];
}

const indexesOf = (node: PlanNode): string[] => [
  ...(node["Index Name"] ? [node["Index Name"]] : []),
  ...(node.Plans ?? []).flatMap(indexesOf),
];

describe("PostgreSQL: the TTL index holds live messages only", () => {
  let b: PostgresBroker;
  let admin: pg.Client;
  let schema: string;
  let close: () => Promise<void>;

  before(async () => {
    ({ broker: b, admin, schema, close } = await brokerWithAdmin("mqexp"));
  });
  after(() => close());

  it("a kept completion leaves the TTL index; a live message with a TTL is in it and expires", async () => {
    await b.createQueue("ttl", { deadLetterOnExpire: true });
    const [kept] = await b.send("ttl", [{ body: "kept" }]);
    const [live] = await b.send("ttl", [{ body: "live" }], { ttlMs: 60_000 });
    const [m] = await b.receive("ttl");
    assert.equal(m?.seqNumber, kept);
    await b.complete("ttl", m!.seqNumber, m!.lockToken!, { retainMs: 60_000 });

    // Read through the index alone (no heap, no other index): what it holds.
    await admin.query("SET enable_seqscan = off; SET enable_bitmapscan = off");
    const inIndex = async () => {
      const q = `SELECT id FROM messages WHERE expires_at > 0 AND state NOT IN ('dead_lettered', 'completed', 'cancelled') ORDER BY id`;
      const { rows: plan } = await admin.query(`EXPLAIN (FORMAT JSON) ${q}`);
      assert.deepEqual(indexesOf(plan[0]["QUERY PLAN"][0].Plan), ["idx_msg_expire"]);
      return (await admin.query(q)).rows.map((r) => Number(r.id));
    };
    assert.deepEqual(await inIndex(), [live]);
    const { rows: retained } = await admin.query(
      "SELECT id FROM messages WHERE state IN ('completed', 'cancelled') AND expires_at > 0",
    );
    assert.deepEqual(
      retained.map((r) => Number(r.id)),
      [kept],
      "the kept completion is retained",
    );

    // The sweep's statements still find live rows through it: the live message expires.
    const { rows: def } = await admin.query(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'idx_msg_expire'",
      [schema],
    );
    assert.match(def[0].indexdef, /'completed'::text, 'cancelled'::text/);
    await admin.query("UPDATE messages SET expires_at = 1 WHERE id = $1", [live]);
    const swept = await b.runMaintenanceOnce();
    assert.ok(swept, "a maintenance pass ran");
    const [dead] = await b.peek("ttl", { state: "dead_lettered" });
    assert.equal(dead?.seqNumber, live);
    assert.equal(dead?.deadLetterReason, "TTLExpired");
    assert.deepEqual(await inIndex(), []);
  });
});
